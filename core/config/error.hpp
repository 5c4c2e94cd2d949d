#pragma once
#include <stdexcept>
#include <string>
#include <vector>

namespace hayate::core {

// Where a value came from: a file position (1-based) or a command-line override.
struct SourceLocation {
  std::string file;  // input file name, or "--set" for command-line overrides
  int line = 0;      // 1-based; 0 when unknown
  int column = 0;    // 1-based; 0 when unknown

  std::string str() const;
};

struct Diagnostic {
  SourceLocation where;
  std::string message;

  std::string str() const { return where.str() + ": " + message; }
};

// Bad input: reported as "file:line:col: message", exit code 2.
class InputError : public std::runtime_error {
 public:
  explicit InputError(std::vector<Diagnostic> diagnostics);
  InputError(SourceLocation where, std::string message);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

// A run that started but failed (NaN, lost particle, out of memory): exit code 3.
class RuntimeFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace hayate::core

#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace hayate::core {

// Where a value came from: a file position (1-based) or a command-line override.
struct SourceLocation {
  std::string file;  // input file name, or "--set key=value" for command-line overrides
  int line = 0;      // 1-based; 0 when unknown
  int column = 0;    // 1-based; 0 when unknown

  std::string str() const;
};

struct Diagnostic {
  SourceLocation where;
  std::string message;

  // "where: message", with control bytes escaped and at most max_message_chars of message.
  std::string str() const;
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

// A value a message echoes back (a key, a scalar, a file name): control bytes escaped (\n,
// \x1b, ...) and at most `limit` characters, then "... (N more bytes)". Messages quote it.
inline constexpr std::size_t echo_limit = 80;
std::string echo(const std::string& value, std::size_t limit = echo_limit);
// The same in single quotes: 'value'.
std::string quoted(const std::string& value, std::size_t limit = echo_limit);

// What a message may hold at most, whatever it echoes (a backstop of echo()).
inline constexpr std::size_t max_message_chars = 2000;

}  // namespace hayate::core

#pragma once
// Problems register a YAML name, a schema declaration and a factory.
#include "config/config.hpp"
#include "config/schema.hpp"
#include "run/problem.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace hayate::core {

struct ProblemInfo {
  std::string name;     // the value of `problem:` in YAML
  std::string summary;  // one line for --help and the docs
  std::function<void(Schema&)> declare;
  std::function<std::unique_ptr<Problem>(const Config&, const std::string& backend)> create;
  // Optional deeper validation for `hayate check` (e.g. compiling a model file the input names);
  // throws InputError. Runs without touching any device.
  std::function<void(const Config&)> check = {};
};

class Registry {
 public:
  static Registry& instance();

  void add(ProblemInfo info);
  std::vector<std::string> names() const;
  const ProblemInfo& find(const std::string& name) const;
  // Keys every problem shares (backend, output, checkpoint) plus the problem's own.
  const Schema& schema(const std::string& name) const;
  ConfigLoader loader() const;

 private:
  std::vector<ProblemInfo> problems_;
  mutable std::vector<std::unique_ptr<Schema>> schemas_;
};

// Keys shared by every problem; declared once here.
void declare_common_keys(Schema& schema, const std::vector<std::string>& problems);

// Registers every physics compiled into this binary (defined in physics/).
void register_builtin_problems(Registry& registry);

}  // namespace hayate::core

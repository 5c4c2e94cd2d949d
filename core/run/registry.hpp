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
  // Every check of the input that the schema cannot express (cross-key checks, files the input
  // names, a model file compiled), for the backend the run would take; throws InputError. Runs
  // on the host, touches no device and allocates nothing sized by the run: `hayate check` and
  // `hayate run` both run it before anything is written (validate_run), so they agree.
  std::function<void(const Config&, const std::string& backend)> check = {};
  // Checks a checkpoint against the input before the problem is made from it: every size,
  // index, type, the time, the time step and the physics parameters the state depends on;
  // throws InputError naming the entry or the mismatching key. Host only, like `check`.
  std::function<void(const Config&, const CheckpointReader&)> check_restart = {};
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

// What validate_run found: the backend the run takes and, for a restart, the checkpoint (read and
// checked against the input).
struct ValidatedRun {
  std::string backend;
  std::unique_ptr<CheckpointReader> checkpoint;  // null: a fresh start
};

// The validation `hayate check` and `hayate run` share, in this order: the backend (--backend,
// else the input's), the problem's own checks, then the restart checkpoint: a regular file of
// this problem, checked against the input by the problem. Throws InputError (exit 2); reads
// files, writes nothing and touches no device.
ValidatedRun validate_run(const Config& config, const std::string& cli_backend = {});

// Keys shared by every problem; declared once here.
void declare_common_keys(Schema& schema, const std::vector<std::string>& problems);

// Registers every physics compiled into this binary (defined in physics/).
void register_builtin_problems(Registry& registry);

}  // namespace hayate::core

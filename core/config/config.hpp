#pragma once
// A validated, fully resolved input: every declared key has its value (given or default), and
// every value remembers where it came from so later checks can point at the right line.
#include "config/error.hpp"
#include "config/schema.hpp"

#include <yaml-cpp/yaml.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hayate::core {

class Config {
 public:
  Config() = default;

  const std::string& problem() const { return problem_; }
  const std::string& input_file() const { return input_file_; }
  // File name without folders and extension, e.g. "plummer_direct".
  std::string input_stem() const;

  bool has(const std::string& path) const;
  long long integer(const std::string& path) const;
  double real(const std::string& path) const;
  bool boolean(const std::string& path) const;
  std::string string(const std::string& path) const;
  std::vector<long long> integers(const std::string& path) const;
  std::vector<double> reals(const std::string& path) const;
  std::vector<std::string> strings(const std::string& path) const;
  // Items of a Records key, each a Config whose paths are relative to the item.
  std::vector<Config> records(const std::string& path) const;

  SourceLocation where(const std::string& path) const;
  // The full key path of `path` in messages (with a record item's prefix: "obstacles[2].file").
  std::string key_path(const std::string& path) const { return prefix_ + path; }
  // Reports a problem-level check (e.g. "box smaller than the cutoff") at the key's position.
  [[noreturn]] void fail(const std::string& path, const std::string& message) const;

  // The resolved tree, in schema order, defaults filled in.
  const YAML::Node& tree() const { return tree_; }
  std::string to_yaml() const;

 private:
  friend class ConfigLoader;
  YAML::Node node(const std::string& path) const;

  std::string problem_;
  std::string input_file_;
  std::string prefix_;  // path prefix of a record item, for messages ("obstacles[2].")
  YAML::Node tree_;
  std::shared_ptr<std::map<std::string, SourceLocation>> locations_;
};

// Parses, applies `key.path=value` overrides, validates against the schema the problem declares,
// and resolves defaults. Throws InputError listing every problem found, each with file:line:col.
class ConfigLoader {
 public:
  // problems: the registered problem names; schema_for: the full schema of one of them.
  using SchemaLookup = const Schema& (*)(const std::string& problem);
  ConfigLoader(std::vector<std::string> problems, SchemaLookup schema_for)
      : problems_(std::move(problems)), schema_for_(schema_for) {}

  Config load_file(const std::string& file, const std::vector<std::string>& overrides = {}) const;
  Config load_string(const std::string& text, const std::string& file_name,
                     const std::vector<std::string>& overrides = {}) const;

 private:
  std::vector<std::string> problems_;
  SchemaLookup schema_for_;
};

}  // namespace hayate::core

#pragma once
// Declarative input schema: each problem declares its keys (type, default, range, one-line doc);
// the loader validates YAML and --set overrides against it and the docs are generated from it.
#include <cstddef>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hayate::core {

enum class ValueType {
  Integer,
  Real,
  Boolean,
  String,
  Choice,
  IntegerList,
  RealList,
  StringList,
  Records
};

std::string type_name(ValueType type);

class Section;

struct KeySpec {
  std::string name;  // last path component
  ValueType type = ValueType::String;
  std::string doc;
  std::optional<std::string> default_text;  // YAML text of the default
  bool optional = false;                    // may be absent with no default
  std::optional<double> min, max;
  bool min_exclusive = false, max_exclusive = false;
  std::vector<std::string> choices;
  std::size_t min_items = 0, max_items = std::numeric_limits<std::size_t>::max();
  std::shared_ptr<Section> record;  // element schema of a Records key

  // Fluent setters used by schema declarations.
  KeySpec& defaults(const std::string& yaml_text);
  KeySpec& defaults(const char* yaml_text) { return defaults(std::string(yaml_text)); }
  KeySpec& defaults(long long value);
  KeySpec& defaults(int value) { return defaults(static_cast<long long>(value)); }
  KeySpec& defaults(double value);
  KeySpec& defaults(bool value);
  KeySpec& optional_key();
  KeySpec& at_least(double lo);
  KeySpec& above(double lo);
  KeySpec& at_most(double hi);
  KeySpec& below(double hi);
  KeySpec& range(double lo, double hi) { return at_least(lo).at_most(hi); }
  KeySpec& items(std::size_t lo, std::size_t hi);

  bool required() const { return !default_text && !optional; }
  std::string expected() const;  // "integer >= 2", "one of: direct, tree", ...
};

// An ordered set of keys and sub-sections (YAML mappings).
class Section {
 public:
  struct Entry {
    std::string name;
    std::string doc;
    std::unique_ptr<KeySpec> key;      // a leaf, or
    std::unique_ptr<Section> section;  // a nested mapping
  };

  Section() = default;
  Section(const Section&) = delete;
  Section& operator=(const Section&) = delete;
  Section(Section&&) = default;
  Section& operator=(Section&&) = default;

  // Declares a nested mapping (created on first use; later calls may add a doc).
  Section& section(const std::string& path, const std::string& doc = {});

  KeySpec& integer(const std::string& path, const std::string& doc);
  KeySpec& real(const std::string& path, const std::string& doc);
  KeySpec& boolean(const std::string& path, const std::string& doc);
  KeySpec& string(const std::string& path, const std::string& doc);
  KeySpec& choice(const std::string& path, std::vector<std::string> choices,
                  const std::string& doc);
  KeySpec& integers(const std::string& path, const std::string& doc);
  KeySpec& reals(const std::string& path, const std::string& doc);
  KeySpec& strings(const std::string& path, const std::string& doc);
  // A list of mappings, each validated against `element` (declared by the callback).
  template <class Declare>
  KeySpec& records(const std::string& path, const std::string& doc, Declare&& declare) {
    KeySpec& spec = add(path, ValueType::Records, doc);
    spec.record = std::make_shared<Section>();
    declare(*spec.record);
    return spec;
  }

  const std::vector<Entry>& entries() const { return entries_; }
  const Entry* find(const std::string& name) const;
  // Leaf lookup by dotted path, nullptr if absent.
  const KeySpec* find_key(const std::string& path) const;
  // Every leaf path below this section, in declaration order.
  std::vector<std::string> all_paths(const std::string& prefix = {}) const;

 private:
  KeySpec& add(const std::string& path, ValueType type, const std::string& doc);
  Entry* find_mutable(const std::string& name);
  std::vector<Entry> entries_;
};

// A key that inputs used to have: it moved to another path, or was removed with a reason.
struct FormerKey {
  std::string path;
  std::string moved_to;  // empty when removed
  std::string reason;    // why it was removed (removed keys only)
};

class Schema : public Section {
 public:
  Schema(std::string problem, std::string summary)
      : problem_(std::move(problem)), summary_(std::move(summary)) {}
  const std::string& problem() const { return problem_; }
  const std::string& summary() const { return summary_; }
  // Markdown reference of the keys: type, default, allowed values, doc. The user reference
  // leaves out the `tuning:` section, which has a reference of its own.
  enum class Part { Inputs, Tuning };
  std::string markdown(Part part = Part::Inputs) const;

  // An input that still names `old_path` is told where the key went instead of "unknown key".
  void moved(const std::string& old_path, const std::string& new_path);
  void removed(const std::string& old_path, const std::string& reason);
  const std::vector<FormerKey>& former_keys() const { return former_; }

 private:
  std::string problem_, summary_;
  std::vector<FormerKey> former_;
};

// Levenshtein distance, used for "did you mean" suggestions.
std::size_t edit_distance(const std::string& a, const std::string& b);
// The candidate nearest to `word`, or empty when none is close enough to be a plausible typo.
std::string nearest(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace hayate::core

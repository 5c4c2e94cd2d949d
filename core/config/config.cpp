#include "config/config.hpp"

#include "io/input_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

namespace hayate::core {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

bool parse_real(const std::string& raw, double& out) {
  const std::string text = trim(raw);
  if (text.empty()) return false;
  // Only decimal forms: strtod would also take "nan", "inf" and hex floats.
  for (char c : text)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.' ||
          c == 'e' || c == 'E'))
      return false;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(out);
}

bool parse_integer(const std::string& raw, long long& out) {
  const std::string text = trim(raw);
  if (text.empty()) return false;
  const char* first = text.data() + (text[0] == '+' ? 1 : 0);
  const auto [ptr, ec] = std::from_chars(first, text.data() + text.size(), out);
  if (ec == std::errc() && ptr == text.data() + text.size()) return true;
  // Also accept exact integers written as reals, e.g. 1e6 particles.
  double v = 0;
  if (!parse_real(text, v) || v != std::floor(v) || std::fabs(v) >= 9.2e18) return false;
  out = static_cast<long long>(v);
  return true;
}

bool parse_boolean(const std::string& raw, bool& out) {
  std::string t = trim(raw);
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  if (t == "true" || t == "yes" || t == "on") return out = true, true;
  if (t == "false" || t == "no" || t == "off") return out = false, true;
  return false;
}

std::vector<std::string> split(const std::string& path, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(path);
  while (std::getline(in, part, sep)) parts.push_back(part);
  return parts;
}

std::string describe(const YAML::Node& n) {
  if (n.IsScalar()) return quoted(n.Scalar());
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  return "nothing";
}

std::string format_real(double v) {
  return fmt::format("{}", v);
}

class Validator {
 public:
  Validator(std::string file, const std::map<std::string, SourceLocation>& overrides,
            std::map<std::string, SourceLocation>& locations, const std::vector<FormerKey>& former)
      : file_(std::move(file)), overrides_(overrides), locations_(locations), former_(former) {}

  std::vector<Diagnostic> diagnostics;

  SourceLocation at(const std::string& path, const YAML::Node& node,
                    const SourceLocation& fallback) const {
    // A value set on the command line (or anything inside it) points at its --set argument.
    for (std::string p = path; !p.empty();) {
      auto it = overrides_.find(p);
      if (it != overrides_.end()) return it->second;
      const auto cut = p.find_last_of(".[");
      p = cut == std::string::npos ? std::string() : p.substr(0, cut);
    }
    const YAML::Mark m = node.Mark();
    if (m.line >= 0) return SourceLocation{file_, m.line + 1, m.column + 1};
    // No position in the file: a section an override created on its way to its key
    // ("--set nosuch.key=1" makes "nosuch"). Blame that override, not the file's first line.
    if (!path.empty())
      for (const auto& [key, where] : overrides_)
        if (key.compare(0, path.size() + 1, path + ".") == 0) return where;
    return fallback;
  }

  static YAML::Node key_node(const YAML::Node& map, const std::string& name) {
    for (auto it = map.begin(); it != map.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == name) return it->first;
    return YAML::Node();
  }

  void report(SourceLocation where, std::string message) {
    diagnostics.push_back(Diagnostic{std::move(where), std::move(message)});
  }

  // Validates mapping `in` against `section`; fills `out` in schema order.
  void section(const Section& section, const YAML::Node& in, const std::string& prefix,
               YAML::Node& out, const SourceLocation& here, const Section& root) {
    const std::string shown = prefix.empty() ? "top level" : quoted(prefix);
    // A check on a key that is absent (its default) is reported where the section is.
    if (!prefix.empty()) locations_.emplace(prefix, here);
    if (!in.IsNull() && !in.IsMap()) {
      report(at(prefix, in, here),
             fmt::format("expected a mapping at {}, got {}", shown, describe(in)));
      return;
    }
    if (in.IsMap()) {
      std::set<std::string> seen;
      for (auto it = in.begin(); it != in.end(); ++it) {
        const YAML::Node key = it->first;  // a copy: the iterator yields temporaries
        if (!key.IsScalar()) {
          report(at("", key, here), "expected a plain key name");
          continue;
        }
        const std::string name = key.Scalar();
        const std::string path = prefix.empty() ? name : prefix + "." + name;
        const SourceLocation key_at = at(path, key, here);
        if (!seen.insert(name).second) {
          report(key_at, fmt::format("duplicate key {}", quoted(path)));
          continue;
        }
        if (!section.find(name) && !former_key(path, key_at, it->second, here))
          unknown_key(section, name, path, prefix, key_at, root);
      }
    }
    for (const auto& e : section.entries()) {
      const std::string path = prefix.empty() ? e.name : prefix + "." + e.name;
      const bool present = in.IsMap() && in[e.name].IsDefined();
      const YAML::Node value = present ? in[e.name] : YAML::Node(YAML::NodeType::Map);
      if (e.section) {
        YAML::Node sub(YAML::NodeType::Map);
        // Missing keys of a section are reported at the section's own key ("system:").
        const SourceLocation sub_at = present ? at(path, key_node(in, e.name), here) : here;
        this->section(*e.section, value, path, sub, sub_at, root);
        if (sub.size() > 0) out[e.name] = sub;
        continue;
      }
      const KeySpec& k = *e.key;
      if (present) {
        YAML::Node resolved;
        if (this->value(k, value, path, resolved, at(path, value, here), root)) {
          out[e.name] = resolved;
          locations_[path] = at(path, value, here);
        }
      } else if (k.default_text) {
        YAML::Node resolved;
        const YAML::Node def = YAML::Load(*k.default_text);
        const SourceLocation def_at = here;  // the section that would hold the key
        if (this->value(k, def, path, resolved, def_at, root)) {
          out[e.name] = resolved;
          locations_[path] = def_at;
        }
      } else if (k.required()) {
        report(here, fmt::format("missing required key '{}' ({}: {})", path, k.expected(), k.doc));
      }
    }
  }

 private:
  // A key the schema used to have: reported with where it went (or why it was removed). A
  // section that only held former keys is looked into, so each key is reported at its line.
  bool former_key(const std::string& path, const SourceLocation& where, const YAML::Node& value,
                  const SourceLocation& here) {
    for (const auto& f : former_)
      if (f.path == path) {
        if (!f.moved_to.empty())
          report(where, fmt::format("'{}' moved to '{}'", path, f.moved_to));
        else
          report(where, fmt::format("'{}' was removed: {}", path, f.reason));
        return true;
      }
    const bool holds_former = std::any_of(former_.begin(), former_.end(), [&](const FormerKey& f) {
      return f.path.compare(0, path.size() + 1, path + ".") == 0;
    });
    if (!holds_former || !value.IsMap()) return false;
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (!it->first.IsScalar()) continue;
      const std::string child = path + "." + it->first.Scalar();
      const SourceLocation child_at = at(child, it->first, here);
      if (!former_key(child, child_at, it->second, here))
        report(child_at, fmt::format("unknown key {}", quoted(child)));
    }
    return true;
  }

  void unknown_key(const Section& section, const std::string& name, const std::string& path,
                   const std::string& prefix, const SourceLocation& where, const Section& root) {
    std::vector<std::string> names;
    for (const auto& e : section.entries()) names.push_back(e.name);
    std::string hint;
    const std::string near = nearest(name, names);
    if (!near.empty()) {
      hint = fmt::format("; did you mean '{}'?", prefix.empty() ? near : prefix + "." + near);
    } else {
      // Maybe it belongs to another section: "n" written at top level instead of "system.n".
      for (const auto& p : root.all_paths()) {
        const auto dot = p.rfind('.');
        if (dot != std::string::npos && p.substr(dot + 1) == name) {
          hint = fmt::format("; did you mean '{}'?", p);
          break;
        }
      }
      if (hint.empty()) {
        hint = "; valid keys here: ";
        for (std::size_t i = 0; i < names.size(); ++i) hint += (i ? ", " : "") + names[i];
      }
    }
    report(where, fmt::format("unknown key {}{}", quoted(path), hint));
  }

  bool in_range(const KeySpec& k, double v) const {
    if (k.min && (k.min_exclusive ? !(v > *k.min) : !(v >= *k.min))) return false;
    if (k.max && (k.max_exclusive ? !(v < *k.max) : !(v <= *k.max))) return false;
    return true;
  }

  // One scalar of type `type` (Integer, Real, Boolean, String or Choice).
  bool scalar(const KeySpec& k, ValueType type, const YAML::Node& in, const std::string& path,
              YAML::Node& out, const SourceLocation& where) {
    const std::string expected = type == k.type ? k.expected() : [&] {
      // List element: same bounds, singular type.
      KeySpec element = k;
      element.type = type;
      element.min_items = 0;
      element.max_items = std::numeric_limits<std::size_t>::max();
      return element.expected();
    }();
    if (!in.IsScalar()) {
      report(where, fmt::format("'{}': expected {}, got {}", path, expected, describe(in)));
      return false;
    }
    const std::string& text = in.Scalar();
    switch (type) {
      case ValueType::Integer: {
        long long v = 0;
        if (!parse_integer(text, v) || !in_range(k, static_cast<double>(v))) break;
        out = YAML::Node(std::to_string(v));
        return true;
      }
      case ValueType::Real: {
        double v = 0;
        if (!parse_real(text, v) || !in_range(k, v)) break;
        out = YAML::Node(format_real(v));
        return true;
      }
      case ValueType::Boolean: {
        bool v = false;
        if (!parse_boolean(text, v)) break;
        out = YAML::Node(v ? "true" : "false");
        return true;
      }
      case ValueType::String:
        out = YAML::Node(text);
        return true;
      case ValueType::Choice: {
        if (std::find(k.choices.begin(), k.choices.end(), text) != k.choices.end()) {
          out = YAML::Node(text);
          return true;
        }
        const std::string near = nearest(text, k.choices);
        report(where, fmt::format("'{}': expected {}, got {}{}", path, expected, quoted(text),
                                  near.empty() ? "" : "; did you mean '" + near + "'?"));
        return false;
      }
      default:
        break;
    }
    report(where, fmt::format("'{}': expected {}, got {}", path, expected, quoted(text)));
    return false;
  }

  bool value(const KeySpec& k, const YAML::Node& in, const std::string& path, YAML::Node& out,
             const SourceLocation& where, const Section& root) {
    if (in.IsNull()) {
      report(where, fmt::format("'{}': missing value (expected {})", path, k.expected()));
      return false;
    }
    ValueType element = ValueType::String;
    switch (k.type) {
      case ValueType::IntegerList:
        element = ValueType::Integer;
        break;
      case ValueType::RealList:
        element = ValueType::Real;
        break;
      case ValueType::StringList:
        element = ValueType::String;
        break;
      case ValueType::Records:
        break;
      default:
        return scalar(k, k.type, in, path, out, where);
    }
    if (!in.IsSequence()) {
      report(where, fmt::format("'{}': expected {}, got {}", path, k.expected(), describe(in)));
      return false;
    }
    if (in.size() < k.min_items || in.size() > k.max_items) {
      report(where, fmt::format("'{}': expected {}, got {} items", path, k.expected(), in.size()));
      return false;
    }
    out = YAML::Node(YAML::NodeType::Sequence);
    bool ok = true;
    for (std::size_t i = 0; i < in.size(); ++i) {
      const std::string item_path = fmt::format("{}[{}]", path, i);
      const YAML::Node item = in[i];
      const SourceLocation item_at = at(item_path, item, where);
      YAML::Node resolved(k.type == ValueType::Records ? YAML::NodeType::Map
                                                       : YAML::NodeType::Null);
      if (k.type == ValueType::Records) {
        const std::size_t before = diagnostics.size();
        if (!item.IsMap()) {
          report(item_at,
                 fmt::format("'{}': expected a mapping, got {}", item_path, describe(item)));
          ok = false;
          continue;
        }
        section(*k.record, item, item_path, resolved, item_at, root);
        ok = ok && diagnostics.size() == before;
      } else {
        ok = scalar(k, element, item, item_path, resolved, item_at) && ok;
      }
      out.push_back(resolved);
    }
    return ok;
  }

  std::string file_;
  const std::map<std::string, SourceLocation>& overrides_;
  std::map<std::string, SourceLocation>& locations_;
  const std::vector<FormerKey>& former_;
};

// Applies "a.b.c=value" onto the tree; records where each override came from.
void apply_overrides(YAML::Node& root, const std::vector<std::string>& overrides,
                     std::map<std::string, SourceLocation>& origin,
                     std::vector<Diagnostic>& diagnostics) {
  for (const auto& arg : overrides) {
    const SourceLocation where{"--set " + echo(arg), 0, 0};
    const auto eq = arg.find('=');
    const std::string path = eq == std::string::npos ? arg : trim(arg.substr(0, eq));
    if (eq == std::string::npos || path.empty()) {
      diagnostics.push_back({where, "expected key.path=value"});
      continue;
    }
    if (path.find_first_of("[] ") != std::string::npos) {
      diagnostics.push_back({where,
                             "expected a dotted key path such as system.n (list items "
                             "cannot be overridden one by one)"});
      continue;
    }
    YAML::Node value;
    try {
      value = YAML::Load(arg.substr(eq + 1));
    } catch (const YAML::Exception& e) {
      diagnostics.push_back({where, "malformed value: " + e.msg});
      continue;
    }
    const auto parts = split(path, '.');
    YAML::Node current = root;
    bool ok = true;
    for (std::size_t i = 0; i + 1 < parts.size() && ok; ++i) {
      YAML::Node next = current[parts[i]];
      if (!next.IsDefined() || next.IsNull()) {
        current[parts[i]] = YAML::Node(YAML::NodeType::Map);
        next = current[parts[i]];
      } else if (!next.IsMap()) {
        diagnostics.push_back({where, fmt::format("{} is not a section", quoted(parts[i]))});
        ok = false;
      }
      current.reset(next);
    }
    if (!ok) continue;
    current[parts.back()] = value;
    origin[path] = where;
  }
}

}  // namespace

std::string Config::input_stem() const {
  std::string name = input_file_;
  const auto slash = name.find_last_of('/');
  if (slash != std::string::npos) name = name.substr(slash + 1);
  const auto dot = name.rfind('.');
  if (dot != std::string::npos && dot > 0) name = name.substr(0, dot);
  return name;
}

YAML::Node Config::node(const std::string& path) const {
  YAML::Node current = YAML::Clone(tree_);
  for (const auto& part : split(path, '.')) {
    if (!current.IsMap() || !current[part].IsDefined())
      throw std::logic_error("config: no value for '" + prefix_ + path + "'");
    current.reset(current[part]);
  }
  return current;
}

bool Config::has(const std::string& path) const {
  YAML::Node current = tree_;
  for (const auto& part : split(path, '.')) {
    if (!current.IsMap()) return false;
    const YAML::Node next = current[part];
    if (!next.IsDefined()) return false;
    current.reset(next);
  }
  return true;
}

long long Config::integer(const std::string& path) const {
  long long v = 0;
  if (!parse_integer(node(path).Scalar(), v))
    throw std::logic_error("config: '" + path + "' is not an integer");
  return v;
}

double Config::real(const std::string& path) const {
  double v = 0;
  if (!parse_real(node(path).Scalar(), v))
    throw std::logic_error("config: '" + path + "' is not a real");
  return v;
}

bool Config::boolean(const std::string& path) const {
  bool v = false;
  if (!parse_boolean(node(path).Scalar(), v))
    throw std::logic_error("config: '" + path + "' is not a boolean");
  return v;
}

std::string Config::string(const std::string& path) const {
  return node(path).Scalar();
}

std::vector<long long> Config::integers(const std::string& path) const {
  std::vector<long long> out;
  for (const auto& item : node(path)) {
    long long v = 0;
    parse_integer(item.Scalar(), v);
    out.push_back(v);
  }
  return out;
}

std::vector<double> Config::reals(const std::string& path) const {
  std::vector<double> out;
  for (const auto& item : node(path)) {
    double v = 0;
    parse_real(item.Scalar(), v);
    out.push_back(v);
  }
  return out;
}

std::vector<std::string> Config::strings(const std::string& path) const {
  std::vector<std::string> out;
  for (const auto& item : node(path)) out.push_back(item.Scalar());
  return out;
}

std::vector<Config> Config::records(const std::string& path) const {
  std::vector<Config> out;
  const YAML::Node list = node(path);
  for (std::size_t i = 0; i < list.size(); ++i) {
    Config item;
    item.problem_ = problem_;
    item.input_file_ = input_file_;
    item.prefix_ = fmt::format("{}{}[{}].", prefix_, path, i);
    item.tree_ = list[i];
    item.locations_ = locations_;
    out.push_back(std::move(item));
  }
  return out;
}

SourceLocation Config::where(const std::string& path) const {
  // The key, else the closest enclosing section or list item that has a position.
  if (locations_)
    for (std::string p = prefix_ + path; !p.empty();) {
      auto it = locations_->find(p);
      if (it != locations_->end()) return it->second;
      const auto cut = p.find_last_of(".[");
      p = cut == std::string::npos ? std::string() : p.substr(0, cut);
    }
  return SourceLocation{input_file_, 1, 1};
}

void Config::fail(const std::string& path, const std::string& message) const {
  throw InputError(where(path), "'" + prefix_ + path + "': " + message);
}

std::string Config::to_yaml() const {
  YAML::Emitter out;
  out << tree_;
  return std::string(out.c_str()) + "\n";
}

Config ConfigLoader::load_file(const std::string& file,
                               const std::vector<std::string>& overrides) const {
  return load_string(read_input_file(file, "input file", max_input_file_bytes), file, overrides);
}

Config ConfigLoader::load_string(const std::string& text, const std::string& file,
                                 const std::vector<std::string>& overrides) const {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(yaml_error_location(file, e.mark), "malformed YAML: " + yaml_error_text(e));
  }
  std::string choices;
  for (std::size_t i = 0; i < problems_.size(); ++i) choices += (i ? ", " : "") + problems_[i];
  if (root.IsNull() || !root.IsDefined()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) {
    throw InputError(SourceLocation{file, 1, 1},
                     "expected a mapping with 'problem: <" + choices + ">' at the top level");
  }
  std::map<std::string, SourceLocation> origin;
  std::vector<Diagnostic> diagnostics;
  apply_overrides(root, overrides, origin, diagnostics);
  if (!diagnostics.empty()) throw InputError(diagnostics);

  const YAML::Node problem = root["problem"];
  if (!problem.IsDefined() || !problem.IsScalar()) {
    SourceLocation where{file, 1, 1};
    if (problem.IsDefined() && problem.Mark().line >= 0)
      where = {file, problem.Mark().line + 1, problem.Mark().column + 1};
    throw InputError(where, "missing required key 'problem' (one of: " + choices + ")");
  }
  const std::string name = problem.Scalar();
  if (std::find(problems_.begin(), problems_.end(), name) == problems_.end()) {
    auto it = origin.find("problem");
    const SourceLocation where = it != origin.end() ? it->second
                                                    : SourceLocation{file, problem.Mark().line + 1,
                                                                     problem.Mark().column + 1};
    const std::string near = nearest(name, problems_);
    throw InputError(where, "'problem': expected one of: " + choices + ", got " + quoted(name) +
                                (near.empty() ? "" : "; did you mean '" + near + "'?"));
  }

  const Schema& schema = schema_for_(name);
  Config config;
  config.problem_ = name;
  config.input_file_ = file;
  config.locations_ = std::make_shared<std::map<std::string, SourceLocation>>();
  Validator validator(file, origin, *config.locations_, schema.former_keys());
  config.tree_ = YAML::Node(YAML::NodeType::Map);
  validator.section(schema, root, "", config.tree_, SourceLocation{file, 1, 1}, schema);
  if (!validator.diagnostics.empty()) {
    auto d = std::move(validator.diagnostics);
    std::stable_sort(d.begin(), d.end(), [](const Diagnostic& a, const Diagnostic& b) {
      if (a.where.file != b.where.file) return a.where.file < b.where.file;
      return std::make_pair(a.where.line, a.where.column) <
             std::make_pair(b.where.line, b.where.column);
    });
    throw InputError(std::move(d));
  }
  return config;
}

}  // namespace hayate::core

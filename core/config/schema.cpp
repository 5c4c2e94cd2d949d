#include "config/schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace hayate::core {
namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(path);
  while (std::getline(in, part, '.')) {
    if (part.empty()) throw std::logic_error("schema path with an empty component: " + path);
    parts.push_back(part);
  }
  if (parts.empty()) throw std::logic_error("empty schema path");
  return parts;
}

std::string format_number(double v) {
  if (v == static_cast<double>(static_cast<long long>(v)) && std::abs(v) < 1e15)
    return std::to_string(static_cast<long long>(v));
  return fmt::format("{}", v);
}

}  // namespace

std::string type_name(ValueType type) {
  switch (type) {
    case ValueType::Integer:
      return "integer";
    case ValueType::Real:
      return "real";
    case ValueType::Boolean:
      return "boolean";
    case ValueType::String:
      return "string";
    case ValueType::Choice:
      return "choice";
    case ValueType::IntegerList:
      return "list of integers";
    case ValueType::RealList:
      return "list of reals";
    case ValueType::StringList:
      return "list of strings";
    case ValueType::Records:
      return "list of mappings";
  }
  return "?";
}

KeySpec& KeySpec::defaults(const std::string& yaml_text) {
  default_text = yaml_text;
  return *this;
}
KeySpec& KeySpec::defaults(long long value) {
  return defaults(std::to_string(value));
}
KeySpec& KeySpec::defaults(double value) {
  return defaults(fmt::format("{}", value));
}
KeySpec& KeySpec::defaults(bool value) {
  return defaults(std::string(value ? "true" : "false"));
}
KeySpec& KeySpec::optional_key() {
  optional = true;
  return *this;
}
KeySpec& KeySpec::at_least(double lo) {
  min = lo;
  min_exclusive = false;
  return *this;
}
KeySpec& KeySpec::above(double lo) {
  min = lo;
  min_exclusive = true;
  return *this;
}
KeySpec& KeySpec::at_most(double hi) {
  max = hi;
  max_exclusive = false;
  return *this;
}
KeySpec& KeySpec::below(double hi) {
  max = hi;
  max_exclusive = true;
  return *this;
}
KeySpec& KeySpec::items(std::size_t lo, std::size_t hi) {
  min_items = lo;
  max_items = hi;
  return *this;
}

std::string KeySpec::expected() const {
  std::string text;
  if (type == ValueType::Choice) {
    text = "one of: ";
    for (std::size_t i = 0; i < choices.size(); ++i) text += (i ? ", " : "") + choices[i];
    return text;
  }
  text = type == ValueType::Real      ? "a real number"
         : type == ValueType::Integer ? "an integer"
                                      : type_name(type);
  std::string bounds;
  if (min && max && !min_exclusive && !max_exclusive) {
    bounds = fmt::format(" in [{}, {}]", format_number(*min), format_number(*max));
  } else {
    if (min) bounds += fmt::format(" {} {}", min_exclusive ? ">" : ">=", format_number(*min));
    if (min && max) bounds += " and";
    if (max) bounds += fmt::format(" {} {}", max_exclusive ? "<" : "<=", format_number(*max));
  }
  if (type == ValueType::IntegerList || type == ValueType::RealList) {
    if (!bounds.empty()) text += ", each" + bounds;
  } else {
    text += bounds;
  }
  if (min_items > 0 || max_items != std::numeric_limits<std::size_t>::max()) {
    if (min_items == max_items)
      text += fmt::format(" ({} items)", min_items);
    else if (max_items == std::numeric_limits<std::size_t>::max())
      text += fmt::format(" (at least {} items)", min_items);
    else
      text += fmt::format(" ({} to {} items)", min_items, max_items);
  }
  return text;
}

Section::Entry* Section::find_mutable(const std::string& name) {
  for (auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

const Section::Entry* Section::find(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

Section& Section::section(const std::string& path, const std::string& doc) {
  Section* current = this;
  const auto parts = split_path(path);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    Entry* e = current->find_mutable(parts[i]);
    if (!e) {
      current->entries_.push_back(Entry{parts[i], {}, nullptr, std::make_unique<Section>()});
      e = &current->entries_.back();
    }
    if (!e->section) throw std::logic_error("schema: '" + path + "' is a key, not a section");
    if (i + 1 == parts.size() && !doc.empty()) e->doc = doc;
    current = e->section.get();
  }
  return *current;
}

KeySpec& Section::add(const std::string& path, ValueType type, const std::string& doc) {
  const auto dot = path.rfind('.');
  Section& parent = dot == std::string::npos ? *this : section(path.substr(0, dot));
  const std::string leaf = dot == std::string::npos ? path : path.substr(dot + 1);
  if (parent.find(leaf)) throw std::logic_error("schema: '" + path + "' declared twice");
  auto spec = std::make_unique<KeySpec>();
  spec->name = leaf;
  spec->type = type;
  spec->doc = doc;
  parent.entries_.push_back(Entry{leaf, doc, std::move(spec), nullptr});
  return *parent.entries_.back().key;
}

KeySpec& Section::integer(const std::string& p, const std::string& d) {
  return add(p, ValueType::Integer, d);
}
KeySpec& Section::real(const std::string& p, const std::string& d) {
  return add(p, ValueType::Real, d);
}
KeySpec& Section::boolean(const std::string& p, const std::string& d) {
  return add(p, ValueType::Boolean, d);
}
KeySpec& Section::string(const std::string& p, const std::string& d) {
  return add(p, ValueType::String, d);
}
KeySpec& Section::choice(const std::string& p, std::vector<std::string> c, const std::string& d) {
  KeySpec& spec = add(p, ValueType::Choice, d);
  spec.choices = std::move(c);
  return spec;
}
KeySpec& Section::integers(const std::string& p, const std::string& d) {
  return add(p, ValueType::IntegerList, d);
}
KeySpec& Section::reals(const std::string& p, const std::string& d) {
  return add(p, ValueType::RealList, d);
}
KeySpec& Section::strings(const std::string& p, const std::string& d) {
  return add(p, ValueType::StringList, d);
}

const KeySpec* Section::find_key(const std::string& path) const {
  const Section* current = this;
  const auto parts = split_path(path);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Entry* e = current->find(parts[i]);
    if (!e) return nullptr;
    if (i + 1 == parts.size()) return e->key.get();
    if (!e->section) return nullptr;
    current = e->section.get();
  }
  return nullptr;
}

std::vector<std::string> Section::all_paths(const std::string& prefix) const {
  std::vector<std::string> out;
  for (const auto& e : entries_) {
    const std::string path = prefix.empty() ? e.name : prefix + "." + e.name;
    if (e.key) {
      out.push_back(path);
    } else {
      auto sub = e.section->all_paths(path);
      out.insert(out.end(), sub.begin(), sub.end());
    }
  }
  return out;
}

namespace {
// Rows of every key below `section`, except a top-level section named `skip`.
void markdown_rows(const Section& section, const std::string& prefix, std::string& out,
                   const std::string& skip = {}) {
  for (const auto& e : section.entries()) {
    const std::string path = prefix.empty() ? e.name : prefix + "." + e.name;
    if (prefix.empty() && !skip.empty() && e.name == skip) continue;
    if (e.section) {
      markdown_rows(*e.section, path, out);
      continue;
    }
    const KeySpec& k = *e.key;
    std::string def =
        k.default_text
            ? "`" + (k.default_text->empty() ? std::string("\"\"") : *k.default_text) + "`"
        : k.optional ? "(optional)"
                     : "**required**";
    std::string allowed = k.type == ValueType::Records ? "see below" : k.expected();
    out +=
        fmt::format("| `{}` | {} | {} | {} | {} |\n", path, type_name(k.type), def, allowed, k.doc);
  }
}

void markdown_records(const Section& section, const std::string& prefix, std::string& out) {
  for (const auto& e : section.entries()) {
    const std::string path = prefix.empty() ? e.name : prefix + "." + e.name;
    if (e.section) {
      markdown_records(*e.section, path, out);
    } else if (e.key->type == ValueType::Records) {
      out += fmt::format(
          "\nEach item of `{}`:\n\n| key | type | default | allowed | meaning |\n"
          "|---|---|---|---|---|\n",
          path);
      markdown_rows(*e.key->record, {}, out);
      markdown_records(*e.key->record, path + "[]", out);
    }
  }
}
}  // namespace

std::string Schema::markdown(Part part) const {
  const Entry* tuning = find("tuning");
  if (part == Part::Tuning) {
    if (!tuning || !tuning->section) return {};
    std::string out = fmt::format("## `problem: {}`\n\n", problem_);
    out += "| key | type | default | allowed | meaning |\n|---|---|---|---|---|\n";
    markdown_rows(*tuning->section, "tuning", out);
    return out;
  }
  std::string out = fmt::format("## `problem: {}`\n\n{}\n\n", problem_, summary_);
  out += "| key | type | default | allowed | meaning |\n|---|---|---|---|---|\n";
  markdown_rows(*this, {}, out, "tuning");
  markdown_records(*this, {}, out);
  if (tuning)
    out +=
        "\nPerformance switches live under `tuning:`, every one `auto` by default: see "
        "`hayate schema --tuning` (docs/dev/tuning.md).\n";
  return out;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

namespace {
constexpr std::size_t kMaxSuggestedLength = 200;
}  // namespace

std::string nearest(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  // A suggestion is for a typo: nothing is suggested for a word longer than any name, and a
  // candidate whose length alone puts it out of reach is not compared (the edit distance costs
  // the product of the lengths).
  if (word.size() > kMaxSuggestedLength) return best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    const std::size_t gap =
        c.size() > word.size() ? c.size() - word.size() : word.size() - c.size();
    if (gap >= best_distance) continue;
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

void Schema::moved(const std::string& old_path, const std::string& new_path) {
  former_.push_back(FormerKey{old_path, new_path, {}});
}

void Schema::removed(const std::string& old_path, const std::string& reason) {
  former_.push_back(FormerKey{old_path, {}, reason});
}

}  // namespace hayate::core

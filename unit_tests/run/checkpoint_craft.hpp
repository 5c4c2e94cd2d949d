#pragma once
// Crafted checkpoints for the tests: a checkpoint written by a real run, rewritten through the
// checkpoint writer with some entries replaced, so its checksum is valid and only what the
// test changed is wrong; and raw containers whose framing (counts, lengths) is wrong.
#include "run/checkpoint.hpp"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace hayate::test {

template <class T>
std::vector<char> bytes_of(const T& value) {
  std::vector<char> b(sizeof(T));
  std::memcpy(b.data(), &value, sizeof(T));
  return b;
}

template <class T>
std::vector<char> bytes_of_vector(const std::vector<T>& values) {
  std::vector<char> b(values.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), values.data(), b.size());
  return b;
}

// Entry `name` of `from` with element k (of type T) set to `value`.
template <class T>
std::vector<char> patched(const core::CheckpointReader& from, const std::string& name,
                          std::size_t k, T value) {
  std::vector<char> b = from.bytes(name);
  std::memcpy(b.data() + k * sizeof(T), &value, sizeof(T));
  return b;
}

// Writes `from`'s entries to `to`, those in `replace` replaced and those in `remove` left out.
inline void rewrite_checkpoint(const std::string& from, const std::string& to,
                               const std::map<std::string, std::vector<char>>& replace,
                               const std::vector<std::string>& remove = {}) {
  const core::CheckpointReader r(from);
  core::CheckpointWriter w(r.problem());
  for (const auto& name : r.names()) {
    bool skip = false;
    for (const auto& x : remove) skip = skip || x == name;
    if (skip) continue;
    const auto it = replace.find(name);
    const std::vector<char> b = it != replace.end() ? it->second : r.bytes(name);
    w.put_bytes(name, b.data(), b.size());
  }
  for (const auto& [name, b] : replace)
    if (!r.has(name)) w.put_bytes(name, b.data(), b.size());
  w.write(to);
}

// A raw container: the bytes before the checksum are given, the checksum is appended, so the
// framing can be anything.
class RawCheckpoint {
 public:
  RawCheckpoint() {
    const char magic[8] = {'H', 'A', 'Y', 'A', 'T', 'E', 'C', 'K'};
    bytes_.append(magic, 8);
    u32(core::checkpoint_format_version);
  }
  RawCheckpoint& u32(std::uint32_t v) {
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof v);
    return *this;
  }
  RawCheckpoint& u64(std::uint64_t v) {
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof v);
    return *this;
  }
  RawCheckpoint& str(const std::string& s) {
    u64(s.size());
    bytes_ += s;
    return *this;
  }
  RawCheckpoint& raw(const std::string& s) {
    bytes_ += s;
    return *this;
  }
  void write(const std::string& path) const {
    std::string out = bytes_;
    const std::uint64_t sum = core::fnv1a(out.data(), out.size());
    out.append(reinterpret_cast<const char*>(&sum), sizeof sum);
    std::ofstream(path, std::ios::binary) << out;
  }

 private:
  std::string bytes_;
};

}  // namespace hayate::test

#include "run/checkpoint.hpp"

#include "config/error.hpp"
#include "io/atomic_file.hpp"

#include <fmt/format.h>

#include <fstream>
#include <iterator>

namespace hayate::core {

namespace {
constexpr char magic[8] = {'H', 'A', 'Y', 'A', 'T', 'E', 'C', 'K'};

void append(std::string& out, const void* data, std::size_t bytes) {
  out.append(static_cast<const char*>(data), bytes);
}
void append_u64(std::string& out, std::uint64_t v) {
  append(out, &v, sizeof v);
}
void append_string(std::string& out, const std::string& s) {
  append_u64(out, s.size());
  out += s;
}

class Cursor {
 public:
  Cursor(const std::vector<char>& data, std::size_t end, const std::string& path)
      : data_(data), end_(end), path_(path) {}
  void read(void* dst, std::size_t bytes) {
    if (bytes > end_ - pos_) truncated();
    std::memcpy(dst, data_.data() + pos_, bytes);
    pos_ += bytes;
  }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    read(&v, sizeof v);
    return v;
  }
  std::vector<char> block() {
    const std::uint64_t n = u64();
    if (n > end_ - pos_) truncated();
    std::vector<char> b(data_.begin() + pos_, data_.begin() + pos_ + n);
    pos_ += n;
    return b;
  }
  std::string string() {
    auto b = block();
    return std::string(b.begin(), b.end());
  }
  bool done() const { return pos_ == end_; }

 private:
  [[noreturn]] void truncated() const {
    throw InputError(SourceLocation{path_, 0, 0}, "checkpoint is truncated or corrupt");
  }
  const std::vector<char>& data_;
  std::size_t end_, pos_ = 0;
  const std::string& path_;
};
}  // namespace

std::uint64_t fnv1a(const void* data, std::size_t bytes, std::uint64_t hash) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) {
    hash ^= p[i];
    hash *= 1099511628211ull;
  }
  return hash;
}

void CheckpointWriter::put_bytes(const std::string& name, const void* data, std::size_t bytes) {
  for (const auto& e : entries_)
    if (e.first == name) throw std::logic_error("checkpoint entry '" + name + "' saved twice");
  const auto* p = static_cast<const char*>(data);
  entries_.emplace_back(name, std::vector<char>(p, p + bytes));
}

void CheckpointWriter::write(const std::string& path) const {
  std::string out;
  append(out, magic, sizeof magic);
  const std::uint32_t version = checkpoint_format_version;
  append(out, &version, sizeof version);
  append_string(out, problem_);
  append_u64(out, entries_.size());
  for (const auto& [name, bytes] : entries_) {
    append_string(out, name);
    append_u64(out, bytes.size());
    append(out, bytes.data(), bytes.size());
  }
  append_u64(out, fnv1a(out.data(), out.size()));
  write_file_atomic(path, out);
}

CheckpointReader::CheckpointReader(const std::string& path) : path_(path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourceLocation{path, 0, 0}, "cannot open the checkpoint file");
  const std::vector<char> data((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
  const std::size_t min_size = sizeof magic + sizeof(std::uint32_t) + 3 * sizeof(std::uint64_t);
  if (data.size() < min_size || std::memcmp(data.data(), magic, sizeof magic) != 0)
    throw InputError(SourceLocation{path, 0, 0}, "not a hayate checkpoint");
  std::uint64_t stored = 0;
  std::memcpy(&stored, data.data() + data.size() - sizeof stored, sizeof stored);
  if (fnv1a(data.data(), data.size() - sizeof stored) != stored)
    throw InputError(SourceLocation{path, 0, 0}, "checkpoint checksum mismatch (corrupt file)");
  Cursor c(data, data.size() - sizeof stored, path_);
  char m[sizeof magic];
  c.read(m, sizeof m);
  std::uint32_t version = 0;
  c.read(&version, sizeof version);
  if (version != checkpoint_format_version)
    throw InputError(SourceLocation{path, 0, 0},
                     fmt::format("checkpoint format version {} (this hayate reads {})", version,
                                 checkpoint_format_version));
  problem_ = c.string();
  const std::uint64_t count = c.u64();
  for (std::uint64_t i = 0; i < count; ++i) {
    std::string name = c.string();
    entries_[name] = c.block();
  }
  if (!c.done()) throw InputError(SourceLocation{path, 0, 0}, "checkpoint has trailing data");
}

const std::vector<char>& CheckpointReader::bytes(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end())
    throw InputError(SourceLocation{path_, 0, 0}, "checkpoint has no entry '" + name + "'");
  return it->second;
}

const std::vector<char>& CheckpointReader::sized(const std::string& name,
                                                 std::size_t expected) const {
  const auto& b = bytes(name);
  if (b.size() != expected) mismatch(name, b.size(), expected);
  return b;
}

void CheckpointReader::mismatch(const std::string& name, std::size_t have, std::size_t want) const {
  throw InputError(SourceLocation{path_, 0, 0},
                   fmt::format("checkpoint entry '{}' holds {} bytes, this run expects {} (was it "
                               "written for another input?)",
                               name, have, want));
}

}  // namespace hayate::core

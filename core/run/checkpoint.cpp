#include "run/checkpoint.hpp"

#include "config/config.hpp"
#include "config/error.hpp"
#include "io/atomic_file.hpp"
#include "io/input_file.hpp"

#include <fmt/format.h>

#include <functional>
#include <utility>

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

// Reads the container; every length is checked against the bytes left before it is used.
class Cursor {
 public:
  Cursor(const std::string& data, std::size_t end, std::function<void(std::size_t)> corrupt)
      : data_(data), end_(end), corrupt_(std::move(corrupt)) {}
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
  // (offset, size) of a length-prefixed block.
  std::pair<std::size_t, std::size_t> block() {
    const std::uint64_t n = u64();
    if (n > end_ - pos_) truncated();
    const std::size_t at = pos_;
    pos_ += std::size_t(n);
    return {at, std::size_t(n)};
  }
  std::string string(std::size_t max_bytes) {
    const std::size_t at = pos_;
    const auto [offset, n] = block();
    if (n > max_bytes) {
      pos_ = at;
      truncated();
    }
    return std::string(data_.data() + offset, n);
  }
  std::size_t left() const { return end_ - pos_; }
  std::size_t position() const { return pos_; }
  bool done() const { return pos_ == end_; }

 private:
  [[noreturn]] void truncated() const {
    corrupt_(pos_);
    throw std::logic_error("checkpoint cursor");  // corrupt_ throws
  }
  const std::string& data_;
  std::size_t end_, pos_ = 0;
  std::function<void(std::size_t)> corrupt_;
};

// Problem and entry names are short identifiers.
constexpr std::size_t max_name_bytes = 256;
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

CheckpointReader::CheckpointReader(const std::string& path, FileOrigin origin)
    : path_(path), origin_(std::move(origin)) {
  data_ = read_input_file(path, "checkpoint", max_checkpoint_bytes, origin_);
  const std::size_t min_size = sizeof magic + sizeof(std::uint32_t) + 3 * sizeof(std::uint64_t);
  if (data_.size() < min_size || std::memcmp(data_.data(), magic, sizeof magic) != 0)
    fail_file("not a hayate checkpoint");
  std::uint64_t stored = 0;
  std::memcpy(&stored, data_.data() + data_.size() - sizeof stored, sizeof stored);
  if (fnv1a(data_.data(), data_.size() - sizeof stored) != stored)
    fail_file("checkpoint checksum mismatch (corrupt file)");
  Cursor c(data_, data_.size() - sizeof stored, [this](std::size_t at) {
    fail_file("checkpoint is truncated or corrupt (at byte " + std::to_string(at) + ")");
  });
  char m[sizeof magic];
  c.read(m, sizeof m);
  std::uint32_t version = 0;
  c.read(&version, sizeof version);
  if (version != checkpoint_format_version)
    fail_file(fmt::format("checkpoint format version {} (this hayate reads {})", version,
                          checkpoint_format_version));
  problem_ = c.string(max_name_bytes);
  const std::uint64_t count = c.u64();
  // Every entry takes at least its two lengths: a count beyond that is a corrupt file, found
  // before anything is sized from it.
  if (count > c.left() / (2 * sizeof(std::uint64_t)))
    fail_file(fmt::format("checkpoint claims {} entries, more than its {} bytes can hold", count,
                          data_.size()));
  for (std::uint64_t i = 0; i < count; ++i) {
    std::string name = c.string(max_name_bytes);
    const std::size_t at = c.position();
    const auto [offset, bytes] = c.block();
    if (!entries_.emplace(name, Entry{offset, bytes}).second)
      fail_file("checkpoint holds entry " + quoted(name) + " twice (at byte " + std::to_string(at) +
                ")");
  }
  if (!c.done()) fail_file("checkpoint has trailing data");
}

void CheckpointReader::fail_file(const std::string& message) const {
  core::fail_file(path_, "checkpoint", message, origin_);
}

void CheckpointReader::fail(const std::string& name, const std::string& message,
                            std::size_t element) const {
  std::string where = "entry " + quoted(name);
  const auto it = entries_.find(name);
  if (element != npos) where += fmt::format(" element {}", element);
  if (it != entries_.end()) where += fmt::format(" (at byte {})", it->second.offset);
  fail_file(where + " " + message);
}

const CheckpointReader::Entry& CheckpointReader::find(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end())
    fail_file("checkpoint has no entry " + quoted(name) +
              " (written for another problem or by an earlier version of hayate?)");
  return it->second;
}

const CheckpointReader::Entry& CheckpointReader::sized(const std::string& name,
                                                       std::size_t expected) const {
  const Entry& e = find(name);
  if (e.size != expected) mismatch(name, e.size, expected);
  return e;
}

void CheckpointReader::mismatch(const std::string& name, std::size_t have, std::size_t want) const {
  fail(name, fmt::format("holds {} bytes, this run expects {} (was it written for another input?)",
                         have, want));
}

void checkpoint_mismatch(const Config& config, const std::string& key,
                         const CheckpointReader& checkpoint, const std::string& message) {
  config.fail(key, "the checkpoint " + quoted(checkpoint.path(), 4 * echo_limit) + " " + message);
}

}  // namespace hayate::core

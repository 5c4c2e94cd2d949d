#include "run/checkpoint.hpp"

#include "config/config.hpp"
#include "config/error.hpp"
#include "io/atomic_file.hpp"
#include "io/input_file.hpp"
#include "parallel/comm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
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
  Cursor(const std::string& data, std::size_t end, std::function<void(std::size_t)> corrupt,
         std::size_t begin = 0)
      : data_(data), end_(end), pos_(begin), corrupt_(std::move(corrupt)) {}
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
  std::size_t end_, pos_;
  std::function<void(std::size_t)> corrupt_;
};

// Problem and entry names are short identifiers.
constexpr std::size_t max_name_bytes = 256;
// The manifest's list of parts; no problem's entry has a dot in its name.
const std::string parts_entry = "hayate.parts";

struct Range {
  std::size_t offset = 0, size = 0;
};
struct Container {
  std::string problem;
  std::map<std::string, Range> entries;
  std::uint64_t checksum = 0;
};

// Checks a container's magic, checksum and version and lists its entries; `fail` (which throws)
// gets what is wrong with it.
Container parse(const std::string& data, const std::function<void(const std::string&)>& fail) {
  const auto bad = [&](const std::string& message) {
    fail(message);
    throw std::logic_error("checkpoint parse");  // fail throws
  };
  const std::size_t min_size = sizeof magic + sizeof(std::uint32_t) + 3 * sizeof(std::uint64_t);
  if (data.size() < min_size || std::memcmp(data.data(), magic, sizeof magic) != 0)
    bad("not a hayate checkpoint");
  Container out;
  std::memcpy(&out.checksum, data.data() + data.size() - sizeof out.checksum, sizeof out.checksum);
  if (fnv1a(data.data(), data.size() - sizeof out.checksum) != out.checksum)
    bad("checkpoint checksum mismatch (corrupt file)");
  Cursor c(data, data.size() - sizeof out.checksum, [&](std::size_t at) {
    bad("checkpoint is truncated or corrupt (at byte " + std::to_string(at) + ")");
  });
  char m[sizeof magic];
  c.read(m, sizeof m);
  std::uint32_t version = 0;
  c.read(&version, sizeof version);
  if (version != checkpoint_format_version)
    bad(fmt::format("checkpoint format version {} (this hayate reads {})", version,
                    checkpoint_format_version));
  out.problem = c.string(max_name_bytes);
  const std::uint64_t count = c.u64();
  // Every entry takes at least its two lengths: a count beyond that is a corrupt file, found
  // before anything is sized from it.
  if (count > c.left() / (2 * sizeof(std::uint64_t)))
    bad(fmt::format("checkpoint claims {} entries, more than its {} bytes can hold", count,
                    data.size()));
  for (std::uint64_t i = 0; i < count; ++i) {
    std::string name = c.string(max_name_bytes);
    const std::size_t at = c.position();
    const auto [offset, bytes] = c.block();
    if (!out.entries.emplace(name, Range{offset, bytes}).second)
      bad("checkpoint holds entry " + core::quoted(name) + " twice (at byte " + std::to_string(at) +
          ")");
  }
  if (!c.done()) bad("checkpoint has trailing data");
  return out;
}

// a * b + c, or false when it does not fit.
bool fits(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t& out) {
  std::uint64_t ab = 0;
  return !__builtin_mul_overflow(a, b, &ab) && !__builtin_add_overflow(ab, c, &out);
}
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
  if (name == parts_entry || name.size() > max_name_bytes)
    throw std::logic_error("checkpoint entry name '" + name + "' is reserved or too long");
  for (const auto& e : entries_)
    if (e.name == name) throw std::logic_error("checkpoint entry '" + name + "' saved twice");
  const auto* p = static_cast<const char*>(data);
  entries_.push_back(Saved{name, std::vector<char>(p, p + bytes)});
}

void CheckpointWriter::put_distributed(const std::string& name, const void* data,
                                       std::size_t record_bytes, std::size_t records,
                                       std::size_t blocks) {
  put_bytes(name, data, record_bytes * records * blocks);
  Saved& e = entries_.back();
  e.split = true;
  e.record_bytes = record_bytes;
  e.records = records;
  e.blocks = blocks;
}

std::string CheckpointWriter::container(Select select, const std::string& parts) const {
  const auto chosen = [&](const Saved& e) {
    return select == Select::all || e.split == (select == Select::split);
  };
  std::string out;
  append(out, magic, sizeof magic);
  const std::uint32_t version = checkpoint_format_version;
  append(out, &version, sizeof version);
  append_string(out, problem_);
  std::uint64_t count = parts.empty() ? 0 : 1;
  for (const auto& e : entries_) count += chosen(e);
  append_u64(out, count);
  for (const auto& e : entries_) {
    if (!chosen(e)) continue;
    append_string(out, e.name);
    append_u64(out, e.bytes.size());
    append(out, e.bytes.data(), e.bytes.size());
  }
  if (!parts.empty()) {
    append_string(out, parts_entry);
    append_string(out, parts);
  }
  append_u64(out, fnv1a(out.data(), out.size()));
  return out;
}

void CheckpointWriter::write(const std::string& path) const {
  write_file_atomic(path, container(Select::all));
}

void CheckpointWriter::write(const std::string& path, const Comm& comm) const {
  // Nothing split (every rank holds the same state): the first rank writes one file.
  std::int64_t split =
      std::any_of(entries_.begin(), entries_.end(), [](const Saved& e) { return e.split; });
  if (comm.distributed()) split = comm.max(split);  // every rank takes the same path
  if (!comm.distributed() || split == 0) {
    if (comm.root()) write(path);
    return;
  }
  namespace fs = std::filesystem;
  // A new generation's parts take new names: the manifest in place names the previous ones.
  CheckpointReader::PartList previous;
  std::uint64_t generation = 0;
  if (comm.root()) {
    previous = CheckpointReader::part_list(path);
    generation = previous.generation + 1;
  }
  comm.broadcast(&generation, sizeof generation);
  const fs::path target(path);
  const auto part_name = [&](int rank) {
    return fmt::format("{}.r{}.g{}", target.filename().string(), rank, generation);
  };

  const std::string part = container(Select::split);
  std::uint64_t checksum = 0;
  std::memcpy(&checksum, part.data() + part.size() - sizeof checksum, sizeof checksum);
  const std::string part_path = (target.parent_path() / part_name(comm.rank())).string();
  write_file_atomic(part_path, part);
  sync_to_disk(part_path);  // on the disk before the previous parts may go

  // What the manifest needs of each part: size, checksum, the split entries' signature (the
  // same on every rank), each split entry's record count.
  std::uint64_t signature = fnv1a(nullptr, 0);
  std::vector<std::uint64_t> info{part.size(), checksum, 0};
  for (const auto& e : entries_) {
    if (!e.split) continue;
    signature = fnv1a(e.name.data(), e.name.size(), signature);
    signature = fnv1a(&e.record_bytes, sizeof e.record_bytes, signature);
    signature = fnv1a(&e.blocks, sizeof e.blocks, signature);
    info.push_back(e.records);
  }
  info[2] = signature;
  const std::size_t ranks = std::size_t(comm.size()), per_rank = info.size();
  std::vector<std::uint64_t> all(comm.root() ? ranks * per_rank : 0);
  comm.gather(info.data(), per_rank * sizeof(std::uint64_t), all.data(),
              std::vector<std::size_t>(ranks, per_rank * sizeof(std::uint64_t)));
  if (!comm.root()) return;

  std::string list;
  append_u64(list, generation);
  append_u64(list, ranks);
  std::vector<std::string> names;
  for (std::size_t r = 0; r < ranks; ++r) {
    const std::uint64_t* at = all.data() + r * per_rank;
    if (at[2] != signature)
      throw std::logic_error("checkpoint: the ranks saved different split entries");
    names.push_back(part_name(int(r)));
    append_string(list, names.back());
    append_u64(list, at[0]);
    append_u64(list, at[1]);
  }
  append_u64(list, per_rank - 3);
  std::size_t k = 3;
  for (const auto& e : entries_) {
    if (!e.split) continue;
    append_string(list, e.name);
    append_u64(list, e.record_bytes);
    append_u64(list, e.blocks);
    for (std::size_t r = 0; r < ranks; ++r) append_u64(list, all[r * per_rank + k]);
    ++k;
  }
  // The manifest: the entries every rank holds alike, then the list of parts.
  write_file_atomic(path, container(Select::shared, list));
  const fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  sync_to_disk(path);
  sync_to_disk(folder.string());
  // The previous generation's parts are garbage now (a failed removal leaves only garbage). Only
  // names this writer would have given them are removed, whatever the old manifest says.
  for (std::size_t r = 0; r < previous.names.size(); ++r) {
    const std::string& name = previous.names[r];
    if (name != fmt::format("{}.r{}.g{}", target.filename().string(), r, previous.generation) ||
        std::find(names.begin(), names.end(), name) != names.end())
      continue;
    std::error_code ec;
    fs::remove(folder / name, ec);
  }
}

CheckpointReader::CheckpointReader(const std::string& path, FileOrigin origin)
    : path_(path), origin_(std::move(origin)) {
  data_ = read_input_file(path, "checkpoint", max_checkpoint_bytes, origin_);
  Container c = parse(data_, [this](const std::string& message) { fail_file(message); });
  problem_ = std::move(c.problem);
  for (const auto& [name, range] : c.entries) entries_[name] = Entry{range.offset, range.size};
  const auto list = entries_.find(parts_entry);
  if (list != entries_.end()) {
    const Entry e = list->second;
    entries_.erase(list);
    read_part_list(e);
  }
}

void CheckpointReader::read_part_list(const Entry& list) {
  namespace fs = std::filesystem;
  Cursor c(
      data_, list.offset + list.size,
      [this](std::size_t at) {
        fail_file("checkpoint's list of part files is truncated or corrupt (at byte " +
                  std::to_string(at) + ")");
      },
      list.offset);
  c.u64();  // generation
  const std::uint64_t ranks = c.u64();
  if (ranks < 1 || ranks > c.left() / (3 * sizeof(std::uint64_t)))
    fail_file(fmt::format("checkpoint names {} part files, more than its list can hold", ranks));
  std::vector<PartFile> parts(ranks);
  std::uint64_t part_bytes = 0;
  const fs::path folder = fs::path(path_).parent_path();
  for (auto& p : parts) {
    const std::string name = c.string(max_name_bytes);
    p.size = c.u64();
    p.checksum = c.u64();
    // A part lies beside its manifest: a bare file name.
    if (name.empty() || name == "." || name == ".." ||
        name.find_first_of("/\\") != std::string::npos)
      fail_file("checkpoint names a part file " + core::quoted(name) + ", not a file name");
    p.path = (folder / name).string();
    if (__builtin_add_overflow(part_bytes, p.size, &part_bytes))
      fail_file("checkpoint's part files claim more bytes than can be held");
  }
  // The parts are there and of the sizes listed before anything is sized from the list (their
  // contents are checked when they are read).
  for (const auto& p : parts) {
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(p.path, ec);
    if (ec) read_input_file(p.path, "checkpoint part", max_checkpoint_bytes, origin_);  // says why
    if (ec || size != p.size)
      fail_file("part file " + core::quoted(p.path) +
                " is not the one this checkpoint was written with (a part of another checkpoint, "
                "or changed since)");
  }
  const std::uint64_t count = c.u64();
  if (count > c.left() / ((3 + ranks) * sizeof(std::uint64_t)))
    fail_file(fmt::format("checkpoint lists {} split entries, more than its list can hold", count));
  std::vector<Split> splits(count);
  std::set<std::string> split_names;
  std::uint64_t joined = 0;
  for (auto& s : splits) {
    s.name = c.string(max_name_bytes);
    s.record_bytes = c.u64();
    s.blocks = c.u64();
    if (s.record_bytes == 0 || s.blocks == 0)
      fail_file("checkpoint's split entry " + core::quoted(s.name) +
                " has records of 0 bytes or no blocks");
    for (std::uint64_t r = 0; r < ranks; ++r) {
      s.first.push_back(s.total);
      s.records.push_back(c.u64());
      if (__builtin_add_overflow(s.total, s.records.back(), &s.total))
        fail_file("checkpoint's split entry " + core::quoted(s.name) + " claims too many records");
    }
    std::uint64_t bytes = 0, rb = 0;
    // Every byte of a split entry lies in one of the parts: more is a corrupt list, found
    // before anything is sized from it.
    if (!fits(s.record_bytes, s.total, 0, rb) || !fits(rb, s.blocks, 0, bytes) ||
        !fits(bytes, 1, joined, joined) || joined > part_bytes)
      fail_file("checkpoint's split entry " + core::quoted(s.name) +
                " claims more bytes than its part files hold");
    if (entries_.count(s.name) || !split_names.insert(s.name).second)
      fail_file("checkpoint holds entry " + core::quoted(s.name) + " twice");
  }
  if (!c.done()) fail_file("checkpoint's list of part files has trailing data");
  for (const auto& s : splits)
    entries_[s.name] = Entry{0, std::size_t(s.record_bytes * s.total * s.blocks), true};
  part_files_ = std::move(parts);
  splits_ = std::move(splits);
  joined_ = splits_.empty();
}

const CheckpointReader::LoadedPart& CheckpointReader::load_part(std::size_t r) const {
  if (r >= part_files_.size()) throw std::logic_error("checkpoint: no such part");
  if (const auto it = loaded_.find(r); it != loaded_.end()) return it->second;
  const PartFile& pf = part_files_[r];
  const auto bad = [&](const std::string& message) {
    fail_file("part file " + core::quoted(pf.path) + " " + message);
  };
  LoadedPart lp;
  lp.bytes = read_input_file(pf.path, "checkpoint part", max_checkpoint_bytes, origin_);
  const std::string& part = lp.bytes;
  std::uint64_t stored = 0;
  if (part.size() >= sizeof stored)
    std::memcpy(&stored, part.data() + part.size() - sizeof stored, sizeof stored);
  if (part.size() != pf.size || stored != pf.checksum)
    bad("is not the one this checkpoint was written with (a part of another checkpoint, or "
        "changed since)");
  const Container pc = parse(part, [&](const std::string& message) { bad(message); });
  if (pc.problem != problem_)
    bad("was written for problem " + core::quoted(pc.problem) + ", not " + core::quoted(problem_));
  for (const auto& s : splits_) {
    const auto e = pc.entries.find(s.name);
    if (e == pc.entries.end()) bad("has no entry " + core::quoted(s.name));
    const std::uint64_t block = s.record_bytes * s.records[r];
    if (e->second.size != block * s.blocks)
      bad(fmt::format("entry {} holds {} bytes, its list says {}", core::quoted(s.name),
                      e->second.size, block * s.blocks));
    lp.entries[s.name] = Entry{e->second.offset, e->second.size, true};
  }
  if (pc.entries.size() != splits_.size())
    bad(fmt::format("holds {} entries, its list says {}", pc.entries.size(), splits_.size()));
  return loaded_.emplace(r, std::move(lp)).first->second;
}

void CheckpointReader::join_all() const {
  // Joined apart and appended at the end, so that a part that fails leaves data_ as it was.
  std::uint64_t bytes = 0;
  for (const auto& s : splits_) bytes += s.record_bytes * s.total * s.blocks;
  std::string joined(std::size_t(bytes), '\0');
  std::map<std::string, std::size_t> offset;  // in `joined`
  std::size_t at = 0;
  for (const auto& s : splits_) {
    offset[s.name] = at;
    at += std::size_t(s.record_bytes * s.total * s.blocks);
  }
  // One part at a time: each rank's records go to their place in every block.
  for (std::size_t r = 0; r < part_files_.size(); ++r) {
    const bool kept = loaded_.count(r) != 0;
    const LoadedPart& part = load_part(r);
    for (const auto& s : splits_) {
      const std::uint64_t block = s.record_bytes * s.records[r];
      const Entry& e = part.entries.at(s.name);
      for (std::uint64_t b = 0; block > 0 && b < s.blocks; ++b)
        std::memcpy(joined.data() + offset[s.name] + (b * s.total + s.first[r]) * s.record_bytes,
                    part.bytes.data() + e.offset + b * block, std::size_t(block));
    }
    if (!kept) loaded_.erase(r);
  }
  const std::size_t base = data_.size();
  data_ += joined;
  for (auto& [name, e] : entries_)
    if (e.split) e.offset = base + offset[name];
  joined_ = true;
}

const CheckpointReader::Split& CheckpointReader::split_entry(const std::string& name) const {
  for (const auto& s : splits_)
    if (s.name == name) return s;
  find(name);  // says when there is no such entry
  fail(name, "is not split over the checkpoint's part files");
}

std::uint64_t CheckpointReader::part_records(const std::string& name, std::size_t part) const {
  const Split& s = split_entry(name);
  if (part >= s.records.size()) throw std::logic_error("checkpoint: no such part");
  return s.records[part];
}

void CheckpointReader::fail_part(std::size_t part, const std::string& name,
                                 const std::string& message, std::size_t element) const {
  std::string where =
      "part file " + core::quoted(part_files_.at(part).path) + ": entry " + core::quoted(name);
  if (element != npos) where += fmt::format(" element {}", element);
  fail_file(where + " " + message);
}

CheckpointReader::PartList CheckpointReader::part_list(const std::string& path) {
  // Only the names are read, skipping every other entry: what the list names is only ever
  // removed when it is the name a writer gives a part (CheckpointWriter::write).
  PartList out;
  std::ifstream in(path, std::ios::binary);
  char m[sizeof magic] = {};
  std::uint32_t version = 0;
  const auto u64 = [&] {
    std::uint64_t v = 0;
    in.read(reinterpret_cast<char*>(&v), sizeof v);
    return v;
  };
  const auto name = [&](std::string& s) {
    const std::uint64_t n = u64();
    if (!in || n > max_name_bytes) return false;
    s.resize(std::size_t(n));
    in.read(s.data(), std::streamsize(n));
    return bool(in);
  };
  in.read(m, sizeof m);
  in.read(reinterpret_cast<char*>(&version), sizeof version);
  if (!in || std::memcmp(m, magic, sizeof magic) != 0 || version != checkpoint_format_version)
    return out;
  std::string problem, entry;
  if (!name(problem)) return out;
  const std::uint64_t count = u64();
  for (std::uint64_t i = 0; in && i < count; ++i) {
    if (!name(entry)) return out;
    const std::uint64_t bytes = u64();
    if (!in) return out;
    if (entry != parts_entry) {
      in.seekg(std::streamoff(bytes), std::ios::cur);
      continue;
    }
    PartList list;
    list.generation = u64();
    const std::uint64_t ranks = u64();
    for (std::uint64_t r = 0; in && r < ranks && r < (std::uint64_t(1) << 24); ++r) {
      std::string part;
      if (!name(part)) return out;
      list.names.push_back(part);
      u64();
      u64();
    }
    return in ? list : out;
  }
  return out;
}

void CheckpointReader::fail_file(const std::string& message) const {
  core::fail_file(path_, "checkpoint", message, origin_);
}

void CheckpointReader::fail(const std::string& name, const std::string& message,
                            std::size_t element) const {
  std::string where = "entry " + core::quoted(name);
  const auto it = entries_.find(name);
  if (element != npos) where += fmt::format(" element {}", element);
  if (it != entries_.end() && it->second.split)
    where += fmt::format(" (split over its {} part files)", part_files_.size());
  else if (it != entries_.end())
    where += fmt::format(" (at byte {})", it->second.offset);
  fail_file(where + " " + message);
}

const CheckpointReader::Entry& CheckpointReader::find(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end())
    fail_file("checkpoint has no entry " + core::quoted(name) +
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
  config.fail(key,
              "the checkpoint " + core::quoted(checkpoint.path(), 4 * echo_limit) + " " + message);
}

}  // namespace hayate::core

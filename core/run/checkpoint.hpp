#pragma once
// Versioned binary checkpoints with a checksum. Layout (little-endian):
//   "HAYATECK" | u32 version | string problem | u64 count | count x (string name, u64 size, bytes)
//   | u64 FNV-1a of everything before it.   (string = u64 length + bytes)
// A problem saves every piece of state it needs to continue bitwise-identically.
//
// The checksum only catches accidents: a crafted file can carry any value with a valid checksum.
// So nothing read from a checkpoint is trusted. The reader checks the container (every length
// against the bytes left, the entry count against the file size, names unique); the typed
// accessors check each entry's size, that reals are finite, booleans 0 or 1, and that integers
// (counts, steps, indices, types) lie in the range the caller gives; each problem then checks the
// entries against its input (ProblemInfo::check_restart) before anything is allocated from them.
// A failure is an InputError (exit 2) at the input key that named the file, naming the entry.
//
// On several ranks a checkpoint is one file per rank plus a manifest. The state a problem holds
// split over the ranks (put_distributed) goes into each rank's part file,
// "<name>.r<rank>.g<generation>", in the container above; the manifest, written last under the
// checkpoint's own name, holds what every rank holds alike and an entry "hayate.parts": the
// generation, each part's name, size and checksum, and for each split entry its record size,
// block count and every rank's record count. Every file is written atomically, and a new
// generation's parts take new names, so until the manifest is renamed into place the previous
// one and its parts stand; the previous parts are removed after it. A reader of the manifest
// checks the list of parts at once (sizes on the disk) and reads the parts only when a split
// entry is asked for: whole, joined into the one-rank layout, by the accessors every reader
// uses, so every reader sees one kind of checkpoint and a restart may take any number of ranks;
// or one part at a time (get_part_*), so that a rank reads only the parts it needs and never
// holds the whole of a large state.
#include "config/error.hpp"
#include "io/input_file.hpp"

#include <Kokkos_Core.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace hayate::core {

class Config;
class Comm;

inline constexpr std::uint32_t checkpoint_format_version = 1;

class CheckpointWriter {
 public:
  explicit CheckpointWriter(std::string problem) : problem_(std::move(problem)) {}

  void put_bytes(const std::string& name, const void* data, std::size_t bytes);
  void put_string(const std::string& name, const std::string& value) {
    put_bytes(name, value.data(), value.size());
  }
  template <class T>
  void put(const std::string& name, const T& value) {
    static_assert(std::is_trivially_copyable<T>::value, "checkpoint values must be plain data");
    put_bytes(name, &value, sizeof(T));
  }
  template <class T>
  void put_vector(const std::string& name, const std::vector<T>& values) {
    static_assert(std::is_trivially_copyable<T>::value, "checkpoint values must be plain data");
    put_bytes(name, values.data(), values.size() * sizeof(T));
  }
  // Any contiguous View, in any memory space.
  template <class View>
  void put_view(const std::string& name, const View& view) {
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), view);
    if (!host.span_is_contiguous()) throw std::logic_error("checkpoint: non-contiguous view");
    put_bytes(name, host.data(), host.span() * sizeof(typename View::value_type));
  }

  // An entry the ranks hold split: this rank's `records` records of `record_bytes` bytes in each
  // of `blocks` blocks (block-major, as a LayoutLeft View's columns). The entry is, block by
  // block, every rank's records in rank order: the layout of the one-rank run. Every rank puts
  // the same split entries in the same order. On one rank an ordinary entry.
  void put_distributed(const std::string& name, const void* data, std::size_t record_bytes,
                       std::size_t records, std::size_t blocks = 1);
  // Rows [first, first + count) of a View of one or two dimensions as this rank's records:
  // one block per column of a LayoutLeft View, else one record per row; all rows by default.
  template <class View>
  void put_distributed_view(const std::string& name, const View& view, std::size_t first = 0,
                            std::size_t count = std::size_t(-1)) {
    using T = typename View::non_const_value_type;
    static_assert(View::rank == 1 || View::rank == 2, "rows of a View of one or two dimensions");
    const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), view);
    if (count == std::size_t(-1)) count = view.extent(0) - first;
    const std::size_t columns = View::rank == 1 ? 1 : view.extent(1);
    constexpr bool by_column = std::is_same<typename View::array_layout, Kokkos::LayoutLeft>::value;
    std::vector<T> rows(count * columns);
    for (std::size_t i = 0; i < count; ++i)
      for (std::size_t c = 0; c < columns; ++c) {
        T value;
        if constexpr (View::rank == 1)
          value = host(first + i);
        else
          value = host(first + i, c);
        rows[by_column ? c * count + i : i * columns + c] = value;
      }
    if (by_column)
      put_distributed(name, rows.data(), sizeof(T), count, columns);
    else
      put_distributed(name, rows.data(), sizeof(T) * columns, count, 1);
  }

  // Writes atomically (temporary name, then rename).
  void write(const std::string& path) const;
  // Every rank calls it. One rank, or nothing split: write(path) on the first rank. Several:
  // each rank's part file, then the manifest at `path` from the first rank, then the previous
  // generation's parts removed.
  void write(const std::string& path, const Comm& comm) const;

 private:
  struct Saved {
    std::string name;
    std::vector<char> bytes;
    bool split = false;
    std::uint64_t record_bytes = 0, records = 0, blocks = 0;
  };
  enum class Select { all, split, shared };
  // The container of the chosen entries (and a list of parts, when given), checksum included.
  std::string container(Select select, const std::string& parts = {}) const;
  std::string problem_;
  std::vector<Saved> entries_;
};

namespace detail {
template <class T>
struct is_real_array : std::false_type {};
template <class T, std::size_t N>
struct is_real_array<std::array<T, N>> : std::is_floating_point<T> {};
}  // namespace detail

class CheckpointReader {
 public:
  // Throws InputError when the file is missing, not a regular file, too large, truncated, of
  // another version or corrupt. `origin`: the input key that named the file (messages point
  // there); empty: messages point at the path.
  explicit CheckpointReader(const std::string& path, FileOrigin origin = {});

  const std::string& path() const { return path_; }
  const std::string& problem() const { return problem_; }
  const FileOrigin& origin() const { return origin_; }
  bool has(const std::string& name) const { return entries_.count(name) != 0; }
  // Every entry's name, in name order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : entries_) out.push_back(e.first);
    return out;
  }
  // Bytes of an entry (throws when absent).
  std::size_t size(const std::string& name) const { return find(name).size; }
  // A copy of an entry's bytes.
  std::vector<char> bytes(const std::string& name) const {
    const Entry& e = find(name);
    const char* p = at(e);
    return std::vector<char>(p, p + e.size);
  }
  std::string get_string(const std::string& name, std::size_t max_length = 4096) const {
    const Entry& e = find(name);
    if (e.size > max_length)
      fail(name, "holds a string of " + std::to_string(e.size) + " bytes, at most " +
                     std::to_string(max_length) + " expected");
    return std::string(at(e), e.size);
  }

  // One value of exactly sizeof(T) bytes. Reals (and arrays of reals) must be finite, booleans
  // 0 or 1. An integer used as a count, step or index goes through the ranged overload below.
  template <class T>
  T get(const std::string& name) const {
    static_assert(std::is_trivially_copyable<T>::value, "checkpoint values must be plain data");
    const Entry& e = sized(name, sizeof(T));
    const char* p = at(e);
    if constexpr (std::is_same<T, bool>::value) {
      if (p[0] != 0 && p[0] != 1)
        fail(name, "holds " + std::to_string(int(p[0])) + ", not a boolean");
    }
    T value;
    std::memcpy(&value, p, sizeof(T));
    if constexpr (std::is_floating_point<T>::value) {
      if (!std::isfinite(value)) fail(name, "holds a value that is not finite");
    } else if constexpr (detail::is_real_array<T>::value) {
      for (std::size_t k = 0; k < value.size(); ++k)
        if (!std::isfinite(value[k])) fail(name, "holds a value that is not finite", k);
    }
    return value;
  }
  // An integer in [lo, hi].
  template <class T>
  T get(const std::string& name, T lo, T hi) const {
    static_assert(std::is_integral<T>::value && !std::is_same<T, bool>::value,
                  "a ranged entry is an integer");
    const T value = get<T>(name);
    if (value < lo || value > hi) out_of_range(name, value, lo, hi);
    return value;
  }

  // A list of reals (each finite) of any length, or of exactly `count` elements.
  template <class T>
  std::vector<T> get_vector(const std::string& name) const {
    static_assert(std::is_floating_point<T>::value,
                  "a list of integers needs a count and a range (get_vector(name, count, lo, hi))");
    const Entry& e = find(name);
    if (e.size % sizeof(T) != 0) mismatch(name, e.size, sizeof(T));
    return finite_values<T>(name, e.size / sizeof(T));
  }
  template <class T>
  std::vector<T> get_vector(const std::string& name, std::size_t count) const {
    static_assert(std::is_floating_point<T>::value,
                  "a list of integers needs a range (get_vector(name, count, lo, hi))");
    sized(name, count * sizeof(T));
    return finite_values<T>(name, count);
  }
  // A list of exactly `count` integers, each in [lo, hi].
  template <class T>
  std::vector<T> get_vector(const std::string& name, std::size_t count, T lo, T hi) const {
    static_assert(std::is_integral<T>::value, "a ranged list holds integers");
    sized(name, count * sizeof(T));
    std::vector<T> v = values<T>(name, count);
    for (std::size_t k = 0; k < count; ++k)
      if (v[k] < lo || v[k] > hi) out_of_range(name, v[k], lo, hi, k);
    return v;
  }

  // Fills an already-sized contiguous View of reals; its size must match the saved one and
  // every value must be finite.
  template <class View>
  void get_view(const std::string& name, const View& view) const {
    using T = typename View::non_const_value_type;
    static_assert(std::is_floating_point<T>::value,
                  "a View of integers needs a range: get_view(name, view, lo, hi)");
    get_view_if(
        name, view, [](const T& v) { return std::isfinite(v); }, "not finite");
  }
  // The same for a View of integers, each in [lo, hi].
  template <class View>
  void get_view(const std::string& name, const View& view, typename View::non_const_value_type lo,
                typename View::non_const_value_type hi) const {
    using T = typename View::non_const_value_type;
    static_assert(std::is_integral<T>::value, "a ranged View holds integers");
    auto host = mirror(name, view);
    const T* p = host.data();
    for (std::size_t k = 0; k < host.span(); ++k)
      if (p[k] < lo || p[k] > hi) out_of_range(name, p[k], lo, hi, k);
    Kokkos::deep_copy(view, host);
  }
  // The same with a predicate each element must meet; `problem` says what a failing one is.
  template <class View, class Predicate>
  void get_view_if(const std::string& name, const View& view, Predicate ok,
                   const char* problem) const {
    auto host = mirror(name, view);
    const auto* p = host.data();
    for (std::size_t k = 0; k < host.span(); ++k)
      if (!ok(p[k])) fail(name, std::string("holds a value that is ") + problem, k);
    Kokkos::deep_copy(view, host);
  }

  // Checks, without copying, that an entry holds exactly `count` finite reals of type T (and,
  // with `positive`, each > 0).
  template <class T>
  void check_reals(const std::string& name, std::size_t count, bool positive = false) const {
    static_assert(std::is_floating_point<T>::value, "reals");
    const Entry& e = sized(name, count * sizeof(T));
    for (std::size_t k = 0; k < count; ++k) {
      T v;
      std::memcpy(&v, at(e) + k * sizeof(T), sizeof(T));
      if (!std::isfinite(v)) fail(name, "holds a value that is not finite", k);
      if (positive && !(v > 0)) fail(name, "holds a value that is not positive", k);
    }
  }

  // Checks, without reading it, that an entry holds exactly `bytes` bytes.
  void check_size(const std::string& name, std::size_t bytes) const { sized(name, bytes); }

  // Raw elements of an entry of exactly `count` elements of T, unchecked beyond the size: for
  // validators that look at the whole array (permutations, masks).
  template <class T>
  std::vector<T> raw_vector(const std::string& name, std::size_t count) const {
    sized(name, count * sizeof(T));
    return values<T>(name, count);
  }

  // An InputError about entry `name` (its element `element`, when given): at the input key that
  // named the checkpoint, naming the file, the entry and its byte offset in the file.
  [[noreturn]] void fail(const std::string& name, const std::string& message,
                         std::size_t element = npos) const;
  // An InputError about the file as a whole.
  [[noreturn]] void fail_file(const std::string& message) const;

  // The part files the manifest at `path` names (empty when there is none there, or it is not
  // a manifest, or it cannot be read), and its generation (0 then).
  struct PartList {
    std::uint64_t generation = 0;
    std::vector<std::string> names;
  };
  static PartList part_list(const std::string& path);
  // The part files of this checkpoint (none: a one-rank file).
  std::size_t parts() const { return part_files_.size(); }

  // Part by part. Part `part`'s records of split entry `name`, block after block: the part's
  // records of the first block, then of the second, and so on (part_records(name, part) records
  // of the entry's record size in each of its blocks). The first access to a part reads it and
  // checks it against the manifest (size, checksum, container, every split entry's size); it is
  // kept until release_parts(). Elements are checked as by the accessors above; failures name
  // the part file and the element within the part's entry.
  std::uint64_t part_records(const std::string& name, std::size_t part) const;
  template <class T>
  std::vector<T> get_part_reals(const std::string& name, std::size_t part) const {
    static_assert(std::is_floating_point<T>::value, "reals");
    std::vector<T> v = part_values<T>(name, part);
    for (std::size_t k = 0; k < v.size(); ++k)
      if (!std::isfinite(v[k])) fail_part(part, name, "holds a value that is not finite", k);
    return v;
  }
  template <class T>
  std::vector<T> get_part_integers(const std::string& name, std::size_t part, T lo, T hi) const {
    static_assert(std::is_integral<T>::value, "integers");
    std::vector<T> v = part_values<T>(name, part);
    for (std::size_t k = 0; k < v.size(); ++k)
      if (v[k] < lo || v[k] > hi)
        fail_part(part, name,
                  "holds " + std::to_string(v[k]) + ", expected an integer in [" +
                      std::to_string(lo) + ", " + std::to_string(hi) + "]",
                  k);
    return v;
  }
  // Forgets the parts read so far (their memory is given back).
  void release_parts() const { loaded_.clear(); }
  // An InputError about element `element` of part `part`'s share of split entry `name`.
  [[noreturn]] void fail_part(std::size_t part, const std::string& name, const std::string& message,
                              std::size_t element = npos) const;

  static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();

 private:
  struct Entry {
    std::size_t offset = 0, size = 0;
    bool split = false;  // held by the part files; offset: in data_ once joined (join_all())
  };
  struct PartFile {
    std::string path;
    std::uint64_t size = 0, checksum = 0;
  };
  struct Split {
    std::string name;
    std::uint64_t record_bytes = 0, blocks = 0, total = 0;
    std::vector<std::uint64_t> records, first;  // per part: count, first record
  };
  struct LoadedPart {
    std::string bytes;
    std::map<std::string, Entry> entries;  // the split entries' ranges in `bytes`
  };
  void read_part_list(const Entry& list);
  const LoadedPart& load_part(std::size_t part) const;
  void join_all() const;
  const Split& split_entry(const std::string& name) const;
  // An entry's bytes; a split one is joined from the parts first.
  const char* at(const Entry& e) const {
    if (e.split && !joined_) join_all();
    return data_.data() + e.offset;
  }
  template <class T>
  std::vector<T> part_values(const std::string& name, std::size_t part) const {
    split_entry(name);
    const LoadedPart& p = load_part(part);
    const Entry& e = p.entries.at(name);
    if (e.size % sizeof(T) != 0) fail_part(part, name, "holds records of another size");
    std::vector<T> v(e.size / sizeof(T));
    if (e.size > 0) std::memcpy(v.data(), p.bytes.data() + e.offset, e.size);
    return v;
  }
  const Entry& find(const std::string& name) const;
  const Entry& sized(const std::string& name, std::size_t expected) const;
  [[noreturn]] void mismatch(const std::string& name, std::size_t have, std::size_t want) const;
  template <class T>
  [[noreturn]] void out_of_range(const std::string& name, T value, T lo, T hi,
                                 std::size_t element = npos) const {
    fail(name,
         "holds " + std::to_string(value) + ", expected an integer in [" + std::to_string(lo) +
             ", " + std::to_string(hi) + "]",
         element);
  }
  template <class T>
  std::vector<T> values(const std::string& name, std::size_t count) const {
    std::vector<T> v(count);
    if (count > 0) std::memcpy(v.data(), at(find(name)), count * sizeof(T));
    return v;
  }
  template <class T>
  std::vector<T> finite_values(const std::string& name, std::size_t count) const {
    std::vector<T> v = values<T>(name, count);
    for (std::size_t k = 0; k < count; ++k)
      if (!std::isfinite(v[k])) fail(name, "holds a value that is not finite", k);
    return v;
  }
  template <class View>
  auto mirror(const std::string& name, const View& view) const {
    auto host = Kokkos::create_mirror_view(Kokkos::HostSpace(), view);
    if (!host.span_is_contiguous()) throw std::logic_error("checkpoint: non-contiguous view");
    const Entry& e = sized(name, host.span() * sizeof(typename View::value_type));
    if (e.size > 0) std::memcpy(host.data(), at(e), e.size);
    return host;
  }

  std::string path_;
  FileOrigin origin_;
  std::string problem_;
  // The whole file, then (once joined) the split entries; entries are ranges of it.
  mutable std::string data_;
  mutable std::map<std::string, Entry> entries_;  // split entries' offsets set by join_all()
  std::vector<PartFile> part_files_;
  std::vector<Split> splits_;
  mutable bool joined_ = true;  // false while split entries wait in the part files
  mutable std::map<std::size_t, LoadedPart> loaded_;
};

// The checkpoint does not fit the input: an InputError at input key `key` (where the mismatching
// value was given), naming the checkpoint: "'system.n': the checkpoint 'c.bin' <message>".
[[noreturn]] void checkpoint_mismatch(const Config& config, const std::string& key,
                                      const CheckpointReader& checkpoint,
                                      const std::string& message);

// Whether `values` (integers read from a checkpoint) hold each of 0 .. values.size() - 1 once;
// the index of the first repeated or out-of-range element, or npos.
template <class T>
std::size_t first_non_permutation(const std::vector<T>& values) {
  std::vector<char> seen(values.size(), 0);
  for (std::size_t k = 0; k < values.size(); ++k) {
    const T v = values[k];
    if (v < 0 || std::uint64_t(v) >= values.size() || seen[std::size_t(v)]) return k;
    seen[std::size_t(v)] = 1;
  }
  return CheckpointReader::npos;
}

std::uint64_t fnv1a(const void* data, std::size_t bytes,
                    std::uint64_t hash = 1469598103934665603ull);

}  // namespace hayate::core

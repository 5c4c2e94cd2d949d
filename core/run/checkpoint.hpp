#pragma once
// Versioned binary checkpoints with a checksum. Layout (little-endian):
//   "HAYATECK" | u32 version | string problem | u64 count | count x (string name, u64 size, bytes)
//   | u64 FNV-1a of everything before it.   (string = u64 length + bytes)
// A problem saves every piece of state it needs to continue bitwise-identically.
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace hayate::core {

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

  // Writes atomically (temporary name, then rename).
  void write(const std::string& path) const;

 private:
  std::string problem_;
  std::vector<std::pair<std::string, std::vector<char>>> entries_;
};

class CheckpointReader {
 public:
  // Throws InputError when the file is missing, truncated, of another version or corrupt.
  explicit CheckpointReader(const std::string& path);

  const std::string& path() const { return path_; }
  const std::string& problem() const { return problem_; }
  bool has(const std::string& name) const { return entries_.count(name) != 0; }
  const std::vector<char>& bytes(const std::string& name) const;
  std::string get_string(const std::string& name) const {
    const auto& b = bytes(name);
    return std::string(b.begin(), b.end());
  }
  template <class T>
  T get(const std::string& name) const {
    const auto& b = sized(name, sizeof(T));
    T value;
    std::memcpy(&value, b.data(), sizeof(T));
    return value;
  }
  template <class T>
  std::vector<T> get_vector(const std::string& name) const {
    const auto& b = bytes(name);
    if (b.size() % sizeof(T) != 0) mismatch(name, b.size(), sizeof(T));
    std::vector<T> values(b.size() / sizeof(T));
    std::memcpy(values.data(), b.data(), b.size());
    return values;
  }
  // Fills an already-sized contiguous View; its size must match the saved one.
  template <class View>
  void get_view(const std::string& name, const View& view) const {
    auto host = Kokkos::create_mirror_view(Kokkos::HostSpace(), view);
    const auto& b = sized(name, host.span() * sizeof(typename View::value_type));
    std::memcpy(host.data(), b.data(), b.size());
    Kokkos::deep_copy(view, host);
  }

 private:
  const std::vector<char>& sized(const std::string& name, std::size_t expected) const;
  [[noreturn]] void mismatch(const std::string& name, std::size_t have, std::size_t want) const;

  std::string path_;
  std::string problem_;
  std::map<std::string, std::vector<char>> entries_;
};

std::uint64_t fnv1a(const void* data, std::size_t bytes,
                    std::uint64_t hash = 1469598103934665603ull);

}  // namespace hayate::core

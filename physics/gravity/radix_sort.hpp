#pragma once
// Stable sort of (64-bit key, int value) pairs by the key's low `key_bits` bits.
//   portable: LSD radix sort, 8 bits per pass. Each pass: per-chunk digit histograms (one thread
//             per chunk of consecutive entries), an exclusive scan of the histograms in
//             digit-major order (so every chunk knows where its entries of each digit go), then
//             a scatter that walks each chunk in order, which keeps the sort stable.
//   cuda:     cub::DeviceRadixSort::SortPairs (backends/cuda/radix_sort.hpp), Kokkos::Cuda only.
// Stability makes the result unique for any input, so both methods give the same permutation.
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

#ifdef KOKKOS_ENABLE_CUDA
#include "cuda/radix_sort.hpp"
#endif

namespace hayate::gravity {

enum class SortMethod { Auto, Portable, Cuda };

template <class Space>
struct RadixSortBuffers {
  using Mem = typename Space::memory_space;
  Kokkos::View<std::uint64_t*, Mem> keys;
  Kokkos::View<int*, Mem> values, counts;
  Kokkos::View<char*, Mem> temp;  // the CUDA path's temporary storage
};

// True when `method` resolves to the CUDA specialization on this space.
template <class Space>
constexpr bool uses_cuda_sort(SortMethod method) {
#ifdef KOKKOS_ENABLE_CUDA
  return std::is_same<Space, Kokkos::Cuda>::value && method != SortMethod::Portable;
#else
  (void)method;
  return false;
#endif
}

// Entries per chunk of the portable sort: enough chunks to occupy the space, at least 256
// entries each so the histograms stay small next to the data.
inline std::int64_t radix_chunk(std::int64_t n, std::int64_t concurrency) {
  const std::int64_t chunk = (n + concurrency - 1) / concurrency;
  return chunk < 256 ? 256 : chunk;
}

// Public only because nvcc forbids device lambdas in private or local contexts.
template <class Space>
void radix_pass(const Kokkos::View<const std::uint64_t*, typename Space::memory_space>& kin,
                const Kokkos::View<const int*, typename Space::memory_space>& vin,
                const Kokkos::View<std::uint64_t*, typename Space::memory_space>& kout,
                const Kokkos::View<int*, typename Space::memory_space>& vout,
                const Kokkos::View<int*, typename Space::memory_space>& counts, const int n,
                const int shift, const std::int64_t chunk) {
  const int chunks = int((n + chunk - 1) / chunk);
  Kokkos::parallel_for(
      "hayate::gravity::radix_histogram", Kokkos::RangePolicy<Space>(0, chunks),
      KOKKOS_LAMBDA(const int c) {
        int hist[256];
        for (int d = 0; d < 256; ++d) hist[d] = 0;
        const std::int64_t b = c * chunk, e = b + chunk < n ? b + chunk : n;
        for (std::int64_t i = b; i < e; ++i) ++hist[(kin(i) >> shift) & 255];
        for (int d = 0; d < 256; ++d) counts(std::int64_t(d) * chunks + c) = hist[d];
      });
  Kokkos::parallel_scan(
      "hayate::gravity::radix_scan", Kokkos::RangePolicy<Space>(0, 256 * chunks),
      KOKKOS_LAMBDA(const int k, int& acc, const bool last) {
        const int v = counts(k);
        if (last) counts(k) = acc;
        acc += v;
      });
  Kokkos::parallel_for(
      "hayate::gravity::radix_scatter", Kokkos::RangePolicy<Space>(0, chunks),
      KOKKOS_LAMBDA(const int c) {
        int at[256];
        for (int d = 0; d < 256; ++d) at[d] = counts(std::int64_t(d) * chunks + c);
        const std::int64_t b = c * chunk, e = b + chunk < n ? b + chunk : n;
        for (std::int64_t i = b; i < e; ++i) {
          const int slot = at[(kin(i) >> shift) & 255]++;
          kout(slot) = kin(i);
          vout(slot) = vin(i);
        }
      });
}

// Sorts keys(0..n) with values(0..n) in place.
template <class Space>
void sort_pairs(const Kokkos::View<std::uint64_t*, typename Space::memory_space>& keys,
                const Kokkos::View<int*, typename Space::memory_space>& values, const int n,
                const int key_bits, RadixSortBuffers<Space>& buf,
                const SortMethod method = SortMethod::Auto) {
  using Mem = typename Space::memory_space;
  if (n <= 1 || key_bits <= 0) return;
  auto grow = [](auto& view, std::int64_t size, const char* label) {
    using V = std::decay_t<decltype(view)>;
    if (std::int64_t(view.extent(0)) < size)
      view = V(Kokkos::view_alloc(std::string(label), Kokkos::WithoutInitializing), size);
  };
  grow(buf.keys, n, "hayate::gravity::radix_keys");
  grow(buf.values, n, "hayate::gravity::radix_values");
  const auto k2 = Kokkos::subview(buf.keys, std::make_pair(0, n));
  const auto v2 = Kokkos::subview(buf.values, std::make_pair(0, n));
#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (std::is_same<Space, Kokkos::Cuda>::value) {
    if (uses_cuda_sort<Space>(method)) {
      if (cuda::sort_pairs(keys.data(), values.data(), k2.data(), v2.data(), n, key_bits,
                           buf.temp)) {
        // On the stream, not fenced (the sort is).
        const Kokkos::Cuda cuda;
        Kokkos::deep_copy(cuda, Kokkos::subview(keys, std::make_pair(0, n)), k2);
        Kokkos::deep_copy(cuda, Kokkos::subview(values, std::make_pair(0, n)), v2);
      }
      return;
    }
  }
#endif
  const std::int64_t chunk = radix_chunk(n, Space().concurrency());
  const std::int64_t chunks = (n + chunk - 1) / chunk;
  grow(buf.counts, 256 * chunks, "hayate::gravity::radix_counts");
  const int passes = (key_bits + 7) / 8;
  Kokkos::View<std::uint64_t*, Mem> ka = Kokkos::subview(keys, std::make_pair(0, n)), kb = k2;
  Kokkos::View<int*, Mem> va = Kokkos::subview(values, std::make_pair(0, n)), vb = v2;
  for (int p = 0; p < passes; ++p) {
    radix_pass<Space>(ka, va, kb, vb, buf.counts, n, 8 * p, chunk);
    std::swap(ka, kb);
    std::swap(va, vb);
  }
  if (passes % 2 == 1) {  // the result sits in the buffers
    Kokkos::deep_copy(Kokkos::subview(keys, std::make_pair(0, n)), ka);
    Kokkos::deep_copy(Kokkos::subview(values, std::make_pair(0, n)), va);
  }
}

}  // namespace hayate::gravity

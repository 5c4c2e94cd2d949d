#pragma once
// Stable sort of (64-bit key, int value) pairs by the key's low `key_bits` bits, on one
// execution-space instance.
//   sort_pairs_portable: LSD radix sort, 8 bits per pass. Each pass: per-chunk digit histograms
//     (one thread per chunk of consecutive entries), an exclusive scan of the histograms in
//     digit-major order (so every chunk knows where its entries of each digit go), then a
//     scatter that walks each chunk in order, which keeps the sort stable.
//   sort_pairs: the sort a space runs, the portable one unless its backend has a faster one
//     (CUB's on CUDA: backends/cuda/radix_sort.hpp).
// Stability makes the result unique for any input, so every path gives the same permutation.
#include "exec/instantiate.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#ifdef KOKKOS_ENABLE_CUDA
#include "cuda/radix_sort.hpp"
#endif

namespace hayate::core {

// Second buffers and scratch of the sorts, kept between calls and grown as needed.
template <class Space>
struct RadixSortBuffers {
  using Mem = typename Space::memory_space;
  Kokkos::View<std::uint64_t*, Mem> keys;
  Kokkos::View<int*, Mem> values, counts;
  Kokkos::View<char*, Mem> temp;  // a backend sort's temporary storage
};

namespace detail {

// Grows `view` (contents not kept) to at least `size` entries.
template <class V>
void grow_radix_buffer(V& view, std::int64_t size, const char* label) {
  if (std::int64_t(view.extent(0)) < size)
    view = V(Kokkos::view_alloc(std::string(label), Kokkos::WithoutInitializing), size);
}

}  // namespace detail

// Entries per chunk of the portable sort: enough chunks to occupy the space, at least 256
// entries each so the histograms stay small next to the data.
inline std::int64_t radix_chunk(std::int64_t n, std::int64_t concurrency) {
  const std::int64_t chunk = (n + concurrency - 1) / concurrency;
  return chunk < 256 ? 256 : chunk;
}

// One pass of the portable sort: entries of kin/vin into kout/vout, stable by the digit at
// `shift`. Public only because nvcc forbids device lambdas in private or local contexts.
template <class Space>
void radix_pass(const Space& space,
                const Kokkos::View<const std::uint64_t*, typename Space::memory_space>& kin,
                const Kokkos::View<const int*, typename Space::memory_space>& vin,
                const Kokkos::View<std::uint64_t*, typename Space::memory_space>& kout,
                const Kokkos::View<int*, typename Space::memory_space>& vout,
                const Kokkos::View<int*, typename Space::memory_space>& counts, const int n,
                const int shift, const std::int64_t chunk) {
  const int chunks = int((n + chunk - 1) / chunk);
  Kokkos::parallel_for(
      "hayate::core::radix_histogram", Kokkos::RangePolicy<Space>(space, 0, chunks),
      KOKKOS_LAMBDA(const int c) {
        int hist[256];
        for (int d = 0; d < 256; ++d) hist[d] = 0;
        const std::int64_t b = c * chunk, e = b + chunk < n ? b + chunk : n;
        for (std::int64_t i = b; i < e; ++i) ++hist[(kin(i) >> shift) & 255];
        for (int d = 0; d < 256; ++d) counts(std::int64_t(d) * chunks + c) = hist[d];
      });
  Kokkos::parallel_scan(
      "hayate::core::radix_scan", Kokkos::RangePolicy<Space>(space, 0, 256 * chunks),
      KOKKOS_LAMBDA(const int k, int& acc, const bool last) {
        const int v = counts(k);
        if (last) counts(k) = acc;
        acc += v;
      });
  Kokkos::parallel_for(
      "hayate::core::radix_scatter", Kokkos::RangePolicy<Space>(space, 0, chunks),
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

// Compiled once, in radix_sort.cpp (exec/instantiate.hpp says why).
#define HAYATE_RADIX_KERNELS(EXTERN, S)                                                            \
  EXTERN template void radix_pass<S>(                                                              \
      const S&, const Kokkos::View<const std::uint64_t*, S::memory_space>&,                        \
      const Kokkos::View<const int*, S::memory_space>&,                                            \
      const Kokkos::View<std::uint64_t*, S::memory_space>&,                                        \
      const Kokkos::View<int*, S::memory_space>&, const Kokkos::View<int*, S::memory_space>&, int, \
      int, std::int64_t);
#ifndef HAYATE_DEFINE_RADIX_KERNELS
HAYATE_FOR_EACH_SPACE(HAYATE_RADIX_KERNELS, extern)
#endif

// Sorts keys(0..n) with values(0..n) in place by the portable radix sort.
template <class Space>
void sort_pairs_portable(const Space& space,
                         const Kokkos::View<std::uint64_t*, typename Space::memory_space>& keys,
                         const Kokkos::View<int*, typename Space::memory_space>& values,
                         const int n, const int key_bits, RadixSortBuffers<Space>& buf) {
  using Mem = typename Space::memory_space;
  if (n <= 1 || key_bits <= 0) return;
  detail::grow_radix_buffer(buf.keys, n, "hayate::core::radix_keys");
  detail::grow_radix_buffer(buf.values, n, "hayate::core::radix_values");
  const std::int64_t chunk = radix_chunk(n, space.concurrency());
  const std::int64_t chunks = (n + chunk - 1) / chunk;
  detail::grow_radix_buffer(buf.counts, 256 * chunks, "hayate::core::radix_counts");
  const int passes = (key_bits + 7) / 8;
  Kokkos::View<std::uint64_t*, Mem> ka = Kokkos::subview(keys, std::make_pair(0, n)),
                                    kb = Kokkos::subview(buf.keys, std::make_pair(0, n));
  Kokkos::View<int*, Mem> va = Kokkos::subview(values, std::make_pair(0, n)),
                          vb = Kokkos::subview(buf.values, std::make_pair(0, n));
  for (int p = 0; p < passes; ++p) {
    radix_pass<Space>(space, ka, va, kb, vb, buf.counts, n, 8 * p, chunk);
    std::swap(ka, kb);
    std::swap(va, vb);
  }
  if (passes % 2 == 1) {  // the result sits in the buffers
    Kokkos::deep_copy(space, Kokkos::subview(keys, std::make_pair(0, n)), ka);
    Kokkos::deep_copy(space, Kokkos::subview(values, std::make_pair(0, n)), va);
  }
}

// Sorts keys(0..n) with values(0..n) in place: CUB's radix sort on the instance's stream on
// CUDA, the portable sort elsewhere. Neither fences: the result is ready in the instance's
// order of work.
template <class Space>
void sort_pairs(const Space& space,
                const Kokkos::View<std::uint64_t*, typename Space::memory_space>& keys,
                const Kokkos::View<int*, typename Space::memory_space>& values, const int n,
                const int key_bits, RadixSortBuffers<Space>& buf) {
#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (std::is_same<Space, Kokkos::Cuda>::value) {
    if (n <= 1 || key_bits <= 0) return;
    detail::grow_radix_buffer(buf.keys, n, "hayate::core::radix_keys");
    detail::grow_radix_buffer(buf.values, n, "hayate::core::radix_values");
    cuda::sort_pairs(space, keys, values, buf.keys, buf.values, n, key_bits, buf.temp);
    return;
  }
#endif
  sort_pairs_portable(space, keys, values, n, key_bits, buf);
}

}  // namespace hayate::core

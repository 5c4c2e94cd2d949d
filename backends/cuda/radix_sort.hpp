#pragma once
// CUB's device radix sort of (64-bit key, int value) pairs, for Kokkos::Cuda: the overload that
// core::sort_pairs (core/algorithms/radix_sort.hpp) takes on CUDA. Stable, like the portable
// sort, so both give the same permutation.
#include <Kokkos_Core.hpp>

#ifdef KOKKOS_ENABLE_CUDA
#include <cub/device/device_radix_sort.cuh>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace hayate::cuda {

// Sorts keys(0..n)/values(0..n) in place by the low key_bits bits of the keys, on the stream of
// `space`, with alt_keys/alt_values (n entries or more) as CUB's second buffer and `temp`
// (grown as needed) as its scratch. Nothing is fenced: the keys and values come from kernels
// of the same instance, so the sort and the copy back run after them in stream order, and a
// fence would leave the device idle while the host issued the sort.
inline void sort_pairs(const Kokkos::Cuda& space,
                       const Kokkos::View<std::uint64_t*, Kokkos::Cuda::memory_space>& keys,
                       const Kokkos::View<int*, Kokkos::Cuda::memory_space>& values,
                       const Kokkos::View<std::uint64_t*, Kokkos::Cuda::memory_space>& alt_keys,
                       const Kokkos::View<int*, Kokkos::Cuda::memory_space>& alt_values,
                       const int n, const int key_bits,
                       Kokkos::View<char*, Kokkos::Cuda::memory_space>& temp) {
  cub::DoubleBuffer<std::uint64_t> k(keys.data(), alt_keys.data());
  cub::DoubleBuffer<int> v(values.data(), alt_values.data());
  const cudaStream_t stream = space.cuda_stream();
  std::size_t bytes = 0;
  auto check = [](cudaError_t e) {
    if (e != cudaSuccess)
      throw std::runtime_error(std::string("cub radix sort: ") + cudaGetErrorString(e));
  };
  check(cub::DeviceRadixSort::SortPairs(nullptr, bytes, k, v, n, 0, key_bits, stream));
  if (temp.extent(0) < bytes)
    temp = Kokkos::View<char*, Kokkos::Cuda::memory_space>(
        Kokkos::view_alloc(std::string("hayate::cuda::radix_temp"), Kokkos::WithoutInitializing),
        bytes);
  check(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, k, v, n, 0, key_bits, stream));
  if (k.Current() == alt_keys.data()) {
    const auto head = std::make_pair(0, n);
    Kokkos::deep_copy(space, Kokkos::subview(keys, head), Kokkos::subview(alt_keys, head));
    Kokkos::deep_copy(space, Kokkos::subview(values, head), Kokkos::subview(alt_values, head));
  }
}

}  // namespace hayate::cuda
#endif

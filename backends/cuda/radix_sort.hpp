#pragma once
// CUB's device radix sort of (64-bit key, int value) pairs, for Kokkos::Cuda. Stable, like the
// portable sort it replaces there, so both give the same permutation.
#include <Kokkos_Core.hpp>

#ifdef KOKKOS_ENABLE_CUDA
#include <cub/device/device_radix_sort.cuh>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace hayate::cuda {

// Sorts keys/values (n entries) by the low key_bits bits, using alt_keys/alt_values (n entries)
// as the second buffer and `temp` (grown as needed) as CUB's scratch. Returns true when the
// result ended up in alt_keys/alt_values.
inline bool sort_pairs(std::uint64_t* keys, int* values, std::uint64_t* alt_keys, int* alt_values,
                       int n, int key_bits, Kokkos::View<char*, Kokkos::CudaSpace>& temp) {
  cub::DoubleBuffer<std::uint64_t> k(keys, alt_keys);
  cub::DoubleBuffer<int> v(values, alt_values);
  const cudaStream_t stream = Kokkos::Cuda().cuda_stream();
  std::size_t bytes = 0;
  auto check = [](cudaError_t e) {
    if (e != cudaSuccess)
      throw std::runtime_error(std::string("cub radix sort: ") + cudaGetErrorString(e));
  };
  check(cub::DeviceRadixSort::SortPairs(nullptr, bytes, k, v, n, 0, key_bits, stream));
  if (temp.extent(0) < bytes)
    temp = Kokkos::View<char*, Kokkos::CudaSpace>(
        Kokkos::view_alloc(std::string("hayate::cuda::radix_temp"), Kokkos::WithoutInitializing),
        bytes);
  // No fence: the keys and values come from kernels of Kokkos' default instance, whose stream
  // this is, so the sort runs after them in stream order. A fence here, and the fencing
  // two-argument deep_copy after it, left the device idle while the host issued the sort: three
  // round trips per launch-order sort, about once a tick.
  check(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, k, v, n, 0, key_bits, stream));
  return k.Current() == alt_keys;
}

}  // namespace hayate::cuda
#endif

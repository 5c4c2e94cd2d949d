#pragma once
// Facts about the CUDA device behind a Kokkos::Cuda instance, read from the CUDA runtime once per
// device. ExecTraits<Kokkos::Cuda> answers with these; nothing else calls the runtime for them.
#include <Kokkos_Core.hpp>

#ifdef KOKKOS_ENABLE_CUDA
#include <cstddef>

namespace hayate::cuda {

struct DeviceInfo {
  int multiprocessors = 1;
  std::size_t shared_memory_per_multiprocessor = 0;  // bytes
  std::size_t shared_memory_per_block_optin = 0;     // bytes a block may request at most
};

inline DeviceInfo device_info(const Kokkos::Cuda& space) {
  static int cached_device = -1;
  static DeviceInfo cached;
  const int device = space.cuda_device();
  if (device == cached_device) return cached;
  DeviceInfo info;
  int value = 0;
  if (cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, device) == cudaSuccess &&
      value > 0)
    info.multiprocessors = value;
  if (cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device) ==
          cudaSuccess &&
      value > 0)
    info.shared_memory_per_multiprocessor = std::size_t(value);
  if (cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) ==
          cudaSuccess &&
      value > 0)
    info.shared_memory_per_block_optin = std::size_t(value);
  cached_device = device;
  cached = info;
  return info;
}

// GPUs the CUDA runtime sees (0 when it sees none or fails); callable before Kokkos starts.
inline int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error so a later Kokkos start sees a clean runtime
    return 0;
  }
  return count;
}

}  // namespace hayate::cuda
#endif

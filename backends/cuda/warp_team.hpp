#pragma once
// Teams of exactly one warp on CUDA devices (a TeamPolicy with team size 32 and vector length
// 1): what Kokkos 3.4 does for any team size, done for one warp.
//   scan:  Kokkos' team_scan goes through shared memory with a block barrier and five warp
//          barriers (~200 instructions for a 64-bit value); a shuffle scan is ~25.
//   sync:  __syncwarp orders the lanes' shared-memory accesses; no block barrier is needed.
//   slots: Kokkos' level-1 scratch takes a slot of a device-wide lock array by a CAS loop that
//          probes slot after slot from blockIdx.x; with many short teams half the slots are held
//          and a team probes a hundred or more. A per-multiprocessor word of busy bits finds a
//          free slot with one or two atomics, since at most 32 blocks are resident on a
//          multiprocessor.
#include <Kokkos_Core.hpp>

#include <cstdint>

#ifdef KOKKOS_ENABLE_CUDA
namespace hayate::cuda {

// Slots per multiprocessor: the most blocks any CUDA architecture keeps resident on one, and
// the bits of one busy word.
inline constexpr int slots_per_sm = 32;

#if defined(__CUDA_ARCH__)
__device__ __forceinline__ unsigned sm_id() {
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
}

// A slot in [0, sm_id_count() * slots_per_sm) that no other running block holds. Called by one
// lane. A block keeps the slot it took even if it were moved to another multiprocessor, so two
// blocks never share one; such a move could only make a search wait for a release.
__device__ __forceinline__ int acquire_sm_slot(unsigned* busy) {
  const unsigned sm = sm_id();
  unsigned* word = busy + sm;
  for (;;) {
    const unsigned held = *static_cast<volatile unsigned*>(word);
    if (held == 0xffffffffu) continue;
    const int bit = __ffs(~held) - 1;
    const unsigned before = atomicOr(word, 1u << bit);
    if ((before & (1u << bit)) == 0) return int(sm) * slots_per_sm + bit;
  }
}

// Gives the slot back; call once every lane is done with what the slot indexes.
__device__ __forceinline__ void release_sm_slot(unsigned* busy, const int slot) {
  atomicAnd(busy + slot / slots_per_sm, ~(1u << (slot % slots_per_sm)));
}

// Exclusive prefix sum of v over the 32 lanes of a full warp (lane = the caller's lane), and
// the warp's total in every lane. U: a 32- or 64-bit unsigned integer (a 64-bit shuffle is two).
template <class U>
__device__ __forceinline__ U warp_exclusive_scan(const U v, const int lane, U& total) {
  U inclusive = v;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const U below = __shfl_up_sync(0xffffffffu, inclusive, d);
    if (lane >= d) inclusive += below;
  }
  total = __shfl_sync(0xffffffffu, inclusive, 31);
  return inclusive - v;
}
#endif

// Writes %nsmid. A named functor: an extended lambda in this inline function, instantiated in
// several translation units, launched as an unregistered kernel ("invalid resource handle").
struct ReadSmIdCount {
  Kokkos::View<int, Kokkos::CudaSpace> count;
  KOKKOS_INLINE_FUNCTION void operator()(int) const {
#if defined(__CUDA_ARCH__)
    unsigned r;
    asm volatile("mov.u32 %0, %%nsmid;" : "=r"(r));
    count() = int(r);
#endif
  }
};

// The number of multiprocessor identifiers of the device behind `space` (%nsmid: the ids need
// not be contiguous, so this, not the multiprocessor count, sizes arrays indexed by sm_id()).
// Read once per device, by a kernel on `space`.
inline int sm_id_count(const Kokkos::Cuda& space) {
  static int cached_device = -1;
  static int cached = 0;
  if (space.cuda_device() == cached_device) return cached;
  ReadSmIdCount f{Kokkos::View<int, Kokkos::CudaSpace>("hayate::cuda::nsmid")};
  Kokkos::parallel_for("hayate::cuda::nsmid", Kokkos::RangePolicy<Kokkos::Cuda>(space, 0, 1), f);
  int host = 0;
  Kokkos::deep_copy(space, host, f.count);
  space.fence();
  cached_device = space.cuda_device();
  cached = host;
  return host;
}

}  // namespace hayate::cuda
#endif

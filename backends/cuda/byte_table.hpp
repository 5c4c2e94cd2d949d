#pragma once
// Byte-table lookups on CUDA devices: one PRMT instruction forms each table index from a byte of
// a packed word, and three more pack four results back into a word. The same lookup written
// with shifts and masks (core::lookup_bytes_portable, the form every other backend runs) is
// about eight integer instructions per byte in PTX (extract, bit insert, 64-bit address add,
// shift and or). Reached through core::lookup_bytes (core/algorithms/byte_lookup.hpp).
#include <cstdint>

namespace hayate::cuda {

#if defined(__CUDA_ARCH__)
// prmt.b32 in its default mode: selector nibble n picks byte n of the result from the 8 bytes
// (b:a); a nibble with bit 3 set replicates the sign bit of the picked byte instead.
__device__ __forceinline__ std::uint32_t permute_bytes(std::uint32_t a, std::uint32_t b,
                                                       std::uint32_t s) {
  std::uint32_t d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(s));
  return d;
}

// table[b | c << 8] for the 8 bytes b of g, with c bit j of `high` for byte j: a 512-entry byte
// table indexed by a byte and one more bit (FHP: site state and chirality).
__device__ __forceinline__ std::uint64_t lookup_bytes(const std::uint8_t* table, std::uint64_t g,
                                                      unsigned high) {
  std::uint32_t half[2] = {std::uint32_t(g), std::uint32_t(g >> 32)};
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    // Bit l of the nibble moved to bit 0 of byte l: the factor 2^0 + 2^7 + 2^14 + 2^21 puts
    // bit l at bit 8l (among others that the mask drops).
    const std::uint32_t c = (((high >> (4 * h)) & 0xfu) * 0x00204081u) & 0x01010101u;
    std::uint32_t o[4];
#pragma unroll
    for (int l = 0; l < 4; ++l)  // index bytes: b, c, then two copies of the sign of c (0)
      o[l] = __ldg(table + permute_bytes(half[h], c, 0xcc00u | ((4u + l) << 4) | unsigned(l)));
    half[h] = permute_bytes(permute_bytes(o[0], o[1], 0x0040u), permute_bytes(o[2], o[3], 0x0040u),
                            0x5410u);
  }
  return half[0] | (std::uint64_t(half[1]) << 32);
}
#endif

}  // namespace hayate::cuda

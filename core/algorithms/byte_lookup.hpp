#pragma once
// Table lookup of every byte of a 64-bit word at once: out byte j = table[byte j | bit j of
// `high` << 8], a 512-entry byte table indexed by a byte and one more bit. The device pass of a
// CUDA build takes the byte-permute form in backends/cuda/byte_table.hpp (fewer integer
// instructions per byte), every other build the loop below; both give the same word.
#include <Kokkos_Core.hpp>

#include <cstdint>

#if defined(__CUDA_ARCH__)
#include "cuda/byte_table.hpp"
#endif

namespace hayate::core {

// The portable form, also the reference the tests hold the device form to.
KOKKOS_INLINE_FUNCTION std::uint64_t lookup_bytes_portable(const std::uint8_t* table,
                                                           std::uint64_t word, unsigned high) {
  std::uint64_t out = 0;
  for (int j = 0; j < 8; ++j) {
    const unsigned b = unsigned(word >> (8 * j)) & 0xffu;
    out |= std::uint64_t(table[b | (((high >> j) & 1u) << 8)]) << (8 * j);
  }
  return out;
}

// table: 512 bytes in the memory of the space that runs the caller; high: bit j for byte j.
KOKKOS_INLINE_FUNCTION std::uint64_t lookup_bytes(const std::uint8_t* table, std::uint64_t word,
                                                  unsigned high) {
#if defined(__CUDA_ARCH__)
  return cuda::lookup_bytes(table, word, high);
#else
  return lookup_bytes_portable(table, word, high);
#endif
}

}  // namespace hayate::core

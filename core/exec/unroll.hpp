#pragma once
// Loop-unrolling hints that only the CUDA device compiler takes: host compilers choose their own
// unrolling and vectorization, and some warn on pragmas they do not know.
#if defined(__CUDA_ARCH__)
#define HAYATE_PRAGMA(text) _Pragma(#text)
#define HAYATE_DEVICE_UNROLL(n) HAYATE_PRAGMA(unroll n)
#else
#define HAYATE_DEVICE_UNROLL(n)
#endif

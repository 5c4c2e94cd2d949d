// Latency probe: cycles per step of dependent chains on one warp, for the pieces of the ODE teams
// interpreter's word: shared and local loads, FP64 and integer arithmetic, selects, a uniform
// branch, a switch (a compare tree), a stack-free binary word, a register-slot word, and stack
// words with the stack in local or shared memory, with a never-taken slow-path test, inside a
// divergent region. Numbers and reading: benchmarks/NOTES.md, twenty-eighth round. Not part of the
// CMake build:
//   nvcc -O3 -arch=sm_90 -o latency_probe benchmarks/tools/latency_probe.cu && ./latency_probe
// Each word kernel declares its own shared arrays on purpose: staging them through one shared
// struct moved the word chains by 6-17% (binary word 82 -> 69 cycles, slow-path test 269 -> 293;
// benchmarks/results/h100/2026-11-25-round29/ode/latency-probe-struct-staging-withdrawn.txt),
// so the numbers recorded in benchmarks/NOTES.md belong to this layout.
#include <cstdint>
#include <cstdio>

#define N 4096
struct Out {
  long long cycles;
  double sink;
};

// Copies of a kernel's inputs into shared memory (the teams kernel's program and U live there).
template <class T>
__device__ void stage(T* to, const T* from, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) to[i] = from[i];
}
// The chain's cycles and its value (so that the chain is not optimised away), from lane 0.
__device__ void report(Out* o, long long t0, long long t1, double sink) {
  if (threadIdx.x == 0) {
    o->cycles = t1 - t0;
    o->sink = sink;
  }
}

// 1. shared-memory pointer chase: idx = s[idx]
__global__ void k_lds(const int* init, Out* o) {
  __shared__ int s[1024];
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) s[i] = init[i];
  __syncthreads();
  int idx = threadIdx.x;
  long long t0 = clock64();
  for (int i = 0; i < N; ++i) idx = s[idx];
  long long t1 = clock64();
  report(o, t0, t1, idx);
}
// 2. shared double load whose address depends on the previous value (as an operand read after its
// table read): v = u[(int)v & 1023]
__global__ void k_lds64(const double* init, Out* o) {
  __shared__ double u[1024];
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) u[i] = init[i];
  __syncthreads();
  double v = threadIdx.x;
  long long t0 = clock64();
  for (int i = 0; i < N; ++i) v = u[int(v) & 1023];
  long long t1 = clock64();
  report(o, t0, t1, v);
}
// 3. local-memory chase (the interpreter's stack): a dynamic index into a per-thread array
__global__ void k_ldl(const int* init, Out* o) {
  int st[32];
  for (int i = 0; i < 32; ++i) st[i] = init[i] & 31;
  int idx = threadIdx.x & 31;
  long long t0 = clock64();
  for (int i = 0; i < N; ++i) idx = st[idx];
  long long t1 = clock64();
  report(o, t0, t1, idx);
}
// 4. FP64 add chain
__global__ void k_dadd(double a, Out* o) {
  double x = threadIdx.x;
  long long t0 = clock64();
#pragma unroll 16
  for (int i = 0; i < N; ++i) x = x + a;
  long long t1 = clock64();
  report(o, t0, t1, x);
}
// 5. integer chain (decode-like: shift, mask, multiply-add)
__global__ void k_int(unsigned a, Out* o) {
  unsigned x = threadIdx.x;
  long long t0 = clock64();
#pragma unroll 16
  for (int i = 0; i < N; ++i) x = x * a + 7u;
  long long t1 = clock64();
  report(o, t0, t1, x);
}
// 6. double select chain: x = p ? x + a : y (FSEL pair after a DADD)
__global__ void k_sel(double a, int p, Out* o) {
  double x = threadIdx.x, y = 2.0;
  long long t0 = clock64();
#pragma unroll 16
  for (int i = 0; i < N; ++i) {
    const double z = x + a;
    x = ((i ^ p) & 1) ? z : (z + y);
  }
  long long t1 = clock64();
  report(o, t0, t1, x);
}
// 7. a uniform data-dependent branch per step on the chain: the value decides the branch
__global__ void k_branch(const int* code, Out* o) {
  __shared__ int c[N];
  stage(c, code, N);
  __syncthreads();
  double x = threadIdx.x;
  long long t0 = clock64();
  for (int i = 0; i < N; ++i) {
    const int w = c[i];
    if (w & 1)
      x = x + 1.0;
    else
      x = x * 1.0000001;
  }
  long long t1 = clock64();
  report(o, t0, t1, x);
}
// 8. the same with the opcode tested through a chain of 6 compares (a switch the compiler makes a
// tree of)
__global__ void k_switch(const int* code, Out* o) {
  __shared__ int c[N];
  stage(c, code, N);
  __syncthreads();
  double x = threadIdx.x;
  long long t0 = clock64();
  for (int i = 0; i < N; ++i) {
    switch (c[i] & 63) {
      case 0:
        x = x + 1.0;
        break;
      case 1:
        x = x * 1.0000001;
        break;
      case 2:
        x = x - 0.5;
        break;
      case 3:
        x = x / 1.0000001;
        break;
      case 4:
        x = -x;
        break;
      case 5:
        x = x + 2.0;
        break;
      case 6:
        x = x * 0.9999999;
        break;
      case 7:
        x = x - 1.0;
        break;
      case 8:
        x = x + 3.0;
        break;
      case 9:
        x = x * 1.0000002;
        break;
      case 10:
        x = x - 2.0;
        break;
      case 11:
        x = fabs(x);
        break;
      default:
        x = x + 0.25;
        break;
    }
  }
  long long t1 = clock64();
  report(o, t0, t1, x);
}
// 9. a mini interpreter word: word from shared (next word prefetched), table read, operand read,
// select of the side, add/mul/sub side by side, select of the result: the parent's binary-family
// path without its other kinds
__global__ void k_word(const unsigned* code, const int* tab, const double* init, Out* o) {
  __shared__ unsigned c[N];
  __shared__ int t[1024];
  __shared__ double u[1024];
  stage(c, code, N);
  stage(t, tab, 1024);
  stage(u, init, 1024);
  __syncthreads();
  double top = threadIdx.x;
  unsigned next = c[0];
  long long t0 = clock64();
  for (int pc = 0; pc < N; ++pc) {
    const unsigned w = next;
    if (pc + 1 < N) next = c[pc + 1];
    const unsigned op = w & 3, a = (w >> 10) & 31;
    const int at = (w & 0x100) ? t[a * 32 + threadIdx.x] : int(a);
    const double v = u[at];
    const bool left = (w >> 9) & 1;
    const double x = left ? v : top, y = left ? top : v;
    const double s = x + y, p = x * y, d = x - y;
    top = op == 0 ? s : op == 1 ? p : d;
  }
  long long t1 = clock64();
  report(o, t0, t1, top);
}

// 10. a fast-path word of a stack machine without a branch: leaf push, operand or stack binary
// (+, *, -), pair (push, then op of two reads); the stack below the top in local memory with
// predicated stores and loads. Word: op 0-2 in bits 0-1, kind in bits 2-3 (0 stack, 1 operand,
// 2 pair, 3 leaf), side bit 9, table bit 8, operand index bits 10-14, second index 15-19.
template <bool SlowBit, bool Diverged>
__global__ void k_fast(const unsigned* code, const int* tab, const double* init, const int* cnt,
                       Out* o) {
  __shared__ unsigned c[N];
  __shared__ int t[1024];
  __shared__ double u[1024];
  stage(c, code, N);
  stage(t, tab, 1024);
  stage(u, init, 1024);
  __syncthreads();
  double top = threadIdx.x, acc = 0.0;
  long long t0 = clock64();
  if (!Diverged || int(threadIdx.x) < cnt[0]) {
    double st[40];
    st[0] = 0.0;
    int sp = 1;
    unsigned next = c[0];
    for (int pc = 0; pc < N; ++pc) {
      const unsigned w = next;
      if (pc + 1 < N) next = c[pc + 1];
      if (SlowBit && (w & 0x80000000u)) {
        top = exp(top);
        continue;
      }
      const unsigned op = w & 3, kind = (w >> 2) & 3, a = (w >> 10) & 31, b = (w >> 15) & 31;
      const int at = (w & 0x100) ? t[a * 32 + threadIdx.x] : int(a);
      const double v = u[at];
      const bool pair = kind == 2, leaf = kind == 3, stack = kind == 0;
      const double second = pair ? u[b] : st[sp - 1];
      const bool left = ((w >> 9) & 1) || stack;
      const double x = pair ? v : left ? (stack ? second : v) : top;
      const double y = pair ? second : left ? top : v;
      const double s = x + y, p = x * y, d = x - y;
      const double r = op == 0 ? s : op == 1 ? p : d;
      if (pair || leaf) st[sp] = top;
      sp += (pair || leaf) ? 1 : stack ? -1 : 0;
      top = leaf ? v : r;
      if (sp > 30) sp = 30;  // keeps the synthetic stream in bounds
      if (sp < 1) sp = 1;
    }
    acc = top;
  }
  long long t1 = clock64();
  report(o, t0, t1, acc);
}

// 11. fast_word with the stack in shared memory (a column per lane) instead of local memory.
__global__ void k_fast_shared(const unsigned* code, const int* tab, const double* init, Out* o) {
  __shared__ unsigned c[N];
  __shared__ int t[1024];
  __shared__ double u[1024];
  __shared__ double sst[40 * 32];
  stage(c, code, N);
  stage(t, tab, 1024);
  stage(u, init, 1024);
  __syncthreads();
  double top = threadIdx.x;
  double* st = sst + threadIdx.x;
  st[0] = 0.0;
  int sp = 1;
  unsigned next = c[0];
  long long t0 = clock64();
  for (int pc = 0; pc < N; ++pc) {
    const unsigned w = next;
    if (pc + 1 < N) next = c[pc + 1];
    const unsigned op = w & 3, kind = (w >> 2) & 3, a = (w >> 10) & 31, b = (w >> 15) & 31;
    const int at = (w & 0x100) ? t[a * 32 + threadIdx.x] : int(a);
    const double v = u[at];
    const bool pair = kind == 2, leaf = kind == 3, stack = kind == 0;
    const double second = pair ? u[b] : st[(sp - 1) * 32];
    const bool left = ((w >> 9) & 1) || stack;
    const double x = pair ? v : left ? (stack ? second : v) : top;
    const double y = pair ? second : left ? top : v;
    const double s = x + y, p = x * y, d = x - y;
    const double r = op == 0 ? s : op == 1 ? p : d;
    if (pair || leaf) st[sp * 32] = top;
    sp += (pair || leaf) ? 1 : stack ? -1 : 0;
    top = leaf ? v : r;
    if (sp > 30) sp = 30;
    if (sp < 1) sp = 1;
  }
  long long t1 = clock64();
  report(o, t0, t1, top);
}
// 12. fast_word with the value below the top in a register too: a push stores `below` (no wait
// on a load), a pop takes `below` and refills it from the stack, a read needed only by a later
// stack word.
__global__ void k_fast_below(const unsigned* code, const int* tab, const double* init, Out* o) {
  __shared__ unsigned c[N];
  __shared__ int t[1024];
  __shared__ double u[1024];
  stage(c, code, N);
  stage(t, tab, 1024);
  stage(u, init, 1024);
  __syncthreads();
  double top = threadIdx.x, below = 0.0;
  double st[40];
  st[0] = 0.0;
  st[1] = 0.0;
  int sp = 1;  // st[1..sp-1] hold the values under `below`
  unsigned next = c[0];
  long long t0 = clock64();
  for (int pc = 0; pc < N; ++pc) {
    const unsigned w = next;
    if (pc + 1 < N) next = c[pc + 1];
    const unsigned op = w & 3, kind = (w >> 2) & 3, a = (w >> 10) & 31, b = (w >> 15) & 31;
    const int at = (w & 0x100) ? t[a * 32 + threadIdx.x] : int(a);
    const double v = u[at];
    const bool pair = kind == 2, leaf = kind == 3, stack = kind == 0;
    const double second = pair ? u[b] : below;
    const bool left = ((w >> 9) & 1) || stack;
    const double x = pair ? v : left ? (stack ? second : v) : top;
    const double y = pair ? second : left ? top : v;
    const double s = x + y, p = x * y, d = x - y;
    const double r = op == 0 ? s : op == 1 ? p : d;
    if (pair || leaf) {
      st[sp] = below;
      ++sp;
      below = top;
    }
    if (stack) {
      --sp;
      below = st[sp];
    }
    top = leaf ? v : r;
    if (sp > 30) sp = 30;
    if (sp < 1) sp = 1;
  }
  long long t1 = clock64();
  report(o, t0, t1, top + below);
}

// 13. a register-machine word without a stack or branch: two sources, each a value of u (through
// the table or not) or one of four register slots, +, * or - side by side, the result into one
// slot. Word: op bits 0-1, source kinds bits 2-3 (1 = u), table bit 8, u index bits 10-14,
// source slots bits 20-21 and 22-23, destination slot bits 24-25.
__global__ void k_register_word(const unsigned* code, const int* tab, const double* init, Out* o) {
  __shared__ unsigned c[N];
  __shared__ int t[1024];
  __shared__ double u[1024];
  stage(c, code, N);
  stage(t, tab, 1024);
  stage(u, init, 1024);
  __syncthreads();
  double r0 = threadIdx.x, r1 = 1.0, r2 = 2.0, r3 = 3.0;
  unsigned next = c[0];
  long long t0 = clock64();
  for (int pc = 0; pc < N; ++pc) {
    const unsigned w = next;
    if (pc + 1 < N) next = c[pc + 1];
    const unsigned op = w & 3, a = (w >> 10) & 31;
    const int at = (w & 0x100) ? t[a * 32 + threadIdx.x] : int(a);
    const double v = u[at];
    const unsigned s1 = (w >> 20) & 3, s2 = (w >> 22) & 3, d = (w >> 24) & 3;
    const double q1 = (s1 & 2) ? ((s1 & 1) ? r3 : r2) : ((s1 & 1) ? r1 : r0);
    const double q2 = (s2 & 2) ? ((s2 & 1) ? r3 : r2) : ((s2 & 1) ? r1 : r0);
    const double x = (w & 4) ? v : q1, y = (w & 8) ? v : q2;
    const double sum = x + y, product = x * y, difference = x - y;
    const double r = op == 0 ? sum : op == 1 ? product : difference;
    r0 = d == 0 ? r : r0;
    r1 = d == 1 ? r : r1;
    r2 = d == 2 ? r : r2;
    r3 = d == 3 ? r : r3;
  }
  long long t1 = clock64();
  report(o, t0, t1, r0 + r1 + r2 + r3);
}

int main() {
  int h_init[1024], h_code[N], h_tab[1024];
  double h_d[1024];
  unsigned h_w[N];
  for (int i = 0; i < 1024; ++i) {
    h_init[i] = (i * 97 + 13) & 1023;
    h_d[i] = double((i * 389 + 7) & 1023) + 0.25;
    h_tab[i] = (i * 31 + 5) & 1023;
  }
  for (int i = 0; i < N; ++i) {
    h_code[i] = (i * 7 + (i >> 3)) % 13;
    h_w[i] = (i % 3) | ((i & 1) << 9) | (((i * 5) & 31) << 10) | ((i % 4 == 0) ? 0x100 : 0);
  }
  int *d_init, *d_code, *d_tab;
  double* d_d;
  unsigned* d_w;
  Out* d_o;
  cudaMalloc(&d_init, sizeof h_init);
  cudaMalloc(&d_code, sizeof h_code);
  cudaMalloc(&d_tab, sizeof h_tab);
  cudaMalloc(&d_d, sizeof h_d);
  cudaMalloc(&d_w, sizeof h_w);
  cudaMalloc(&d_o, sizeof(Out));
  cudaMemcpy(d_init, h_init, sizeof h_init, cudaMemcpyHostToDevice);
  cudaMemcpy(d_code, h_code, sizeof h_code, cudaMemcpyHostToDevice);
  cudaMemcpy(d_tab, h_tab, sizeof h_tab, cudaMemcpyHostToDevice);
  cudaMemcpy(d_d, h_d, sizeof h_d, cudaMemcpyHostToDevice);
  cudaMemcpy(d_w, h_w, sizeof h_w, cudaMemcpyHostToDevice);
  int h_cnt = 20;
  int* d_cnt;
  cudaMalloc(&d_cnt, sizeof(int));
  cudaMemcpy(d_cnt, &h_cnt, sizeof(int), cudaMemcpyHostToDevice);
  // fast-path words: kinds cycle through operand, pair, leaf, stack (balanced pushes and pops)
  unsigned h_f[N];
  for (int i = 0; i < N; ++i) {
    const unsigned kind = (unsigned[]){1, 2, 3, 0, 1, 3, 0, 1}[i % 8];
    h_f[i] = (i % 3) | (kind << 2) | ((i & 1) << 9) | (((i * 5) & 31) << 10) |
             (((i * 11) & 31) << 15) | ((i % 4 == 0) ? 0x100 : 0);
  }
  unsigned* d_f;
  cudaMalloc(&d_f, sizeof h_f);
  cudaMemcpy(d_f, h_f, sizeof h_f, cudaMemcpyHostToDevice);
  // register words: each reads the slot the word before wrote (a dependent chain), the other
  // source alternating between u and a slot
  unsigned h_r[N];
  for (int i = 0; i < N; ++i) {
    const unsigned prev = unsigned(i + 3) & 3, dst = unsigned(i) & 3;
    h_r[i] = (i % 3) | ((i & 1) ? 4u : 0u) | ((((i * 5) & 31)) << 10) | ((i % 4 == 0) ? 0x100 : 0) |
             (prev << 22) | (((i * 7) & 3) << 20) | (dst << 24);
  }
  unsigned* d_r;
  cudaMalloc(&d_r, sizeof h_r);
  cudaMemcpy(d_r, h_r, sizeof h_r, cudaMemcpyHostToDevice);
  const char* names[] = {"lds_chase_int",
                         "lds_dependent_double",
                         "ldl_chase",
                         "dadd_chain",
                         "imad_chain",
                         "dadd_then_select",
                         "uniform_branch_per_step",
                         "switch_13_cases",
                         "binary_word",
                         "fast_word",
                         "fast_word_slow_test",
                         "fast_word_slow_test_diverged",
                         "fast_word_shared_stack",
                         "fast_word_below_in_register",
                         "register_word"};
  for (int k = 0; k < 15; ++k) {
    long long best = -1;
    Out h;
    for (int rep = 0; rep < 5; ++rep) {
      switch (k) {
        case 0:
          k_lds<<<1, 32>>>(d_init, d_o);
          break;
        case 1:
          k_lds64<<<1, 32>>>(d_d, d_o);
          break;
        case 2:
          k_ldl<<<1, 32>>>(d_init, d_o);
          break;
        case 3:
          k_dadd<<<1, 32>>>(1e-9, d_o);
          break;
        case 4:
          k_int<<<1, 32>>>(3u, d_o);
          break;
        case 5:
          k_sel<<<1, 32>>>(1e-9, 0, d_o);
          break;
        case 6:
          k_branch<<<1, 32>>>(d_code, d_o);
          break;
        case 7:
          k_switch<<<1, 32>>>(d_code, d_o);
          break;
        case 8:
          k_word<<<1, 32>>>(d_w, d_tab, d_d, d_o);
          break;
        case 9:
          k_fast<false, false><<<1, 32>>>(d_f, d_tab, d_d, d_cnt, d_o);
          break;
        case 10:
          k_fast<true, false><<<1, 32>>>(d_f, d_tab, d_d, d_cnt, d_o);
          break;
        case 11:
          k_fast<true, true><<<1, 32>>>(d_f, d_tab, d_d, d_cnt, d_o);
          break;
        case 12:
          k_fast_shared<<<1, 32>>>(d_f, d_tab, d_d, d_o);
          break;
        case 13:
          k_fast_below<<<1, 32>>>(d_f, d_tab, d_d, d_o);
          break;
        case 14:
          k_register_word<<<1, 32>>>(d_r, d_tab, d_d, d_o);
          break;
      }
      cudaMemcpy(&h, d_o, sizeof h, cudaMemcpyDeviceToHost);
      if (best < 0 || h.cycles < best) best = h.cycles;
    }
    printf("%-26s %7.1f cycles per step (best of 5, %d steps, one warp)\n", names[k],
           double(best) / N, N);
  }
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    printf("error %s\n", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}

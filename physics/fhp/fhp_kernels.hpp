#pragma once
// The FHP kernels, all fused collide+stream with a pull and two buffers:
//   bytes_wide:   one byte per site (7 state bits + solid bit), 64 sites (8 words of one row) of
//                 each of two rows per thread, so one random word and one index computation
//                 serve 64 sites; streaming gathers in the byte words, collision is a table
//                 lookup per byte.
//   bytes_sliced: as bytes_wide, but the 8 streamed words are bit-sliced in registers into
//                 planes and collide with the bit kernel's boolean logic, then sliced back.
//   bits:         multi-spin coding, 64 sites per word and direction (7 planes + a solid plane),
//                 one thread per word; collision is the table's boolean expansion
//                 (fhp_bitlogic.hpp).
// All draw the same random bits per site (fhp_lattice.hpp), so they are bitwise identical,
// and all convert to and from the canonical site bytes (row-major, one byte per site) that
// initial conditions, analysis and checkpoints use. Every engine launches on the
// execution-space instance it was made with.
#include "algorithms/byte_lookup.hpp"
#include "exec/instantiate.hpp"
#include "fhp/fhp_bitlogic.hpp"
#include "fhp/fhp_lattice.hpp"
#include "fhp/fhp_rules.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace hayate::fhp {

enum class Kernel { bytes_wide, bytes_sliced, bits };

inline std::string kernel_name(Kernel k) {
  switch (k) {
    case Kernel::bytes_wide:
      return "bytes_wide";
    case Kernel::bytes_sliced:
      return "bytes_sliced";
    case Kernel::bits:
      return "bits";
  }
  return "?";
}

// Parses a kernel name of `tuning.kernel` other than auto.
inline Kernel parse_kernel(const std::string& name) {
  for (const Kernel k : {Kernel::bytes_wide, Kernel::bytes_sliced, Kernel::bits})
    if (kernel_name(k) == name) return k;
  throw std::logic_error("fhp: unknown kernel '" + name + "'");
}

// `tuning.kernel: auto` for a row of nx sites on a backend with traits Traits
// (core::ExecTraits<Space>). The bit kernel needs nx to be a multiple of 64; otherwise the
// 64-site byte kernel with table lookups. Where bits can run, it is the faster kernel on GPUs
// for every model; on host backends the table lookup beats the boolean logic of the denser rule
// sets (FHP-II, FHP-III) and the logic wins for FHP-I (measured, see docs/dev/decisions.md).
template <class Traits>
Kernel auto_kernel(Model model, long long nx) {
  if (nx % 64 != 0) return Kernel::bytes_wide;
  return Traits::is_gpu || model == Model::fhp1 ? Kernel::bits : Kernel::bytes_wide;
}

struct StepParams {
  std::uint64_t seed = 1;
  std::uint32_t force_q = 0;  // forcing probability in units of 1/65536
  // The engine's rows are a slab of a larger lattice (one rank's rows with halo rows): stored
  // row y is global row row0 + y, which keys its random bits, so that any split draws the bits
  // of the whole lattice. Halo rows may lie outside the lattice (row0 < 0 for the first slab):
  // their bits do not matter, the halo exchange overwrites what they compute.
  int row0 = 0;
};

// Site bytes in row-major order, one per site: the exchange format between kernels.
template <class Space>
using SiteBytes = Kokkos::View<std::uint8_t*, typename Space::memory_space>;

template <class Space>
class Engine {
 public:
  explicit Engine(int rows) : rows_(rows) {}
  virtual ~Engine() = default;
  // Computes step `step` (0-based): collide and stream every site once.
  virtual void advance(std::int64_t step) = 0;
  virtual void load(const SiteBytes<Space>& sites) = 0;
  virtual void store(const SiteBytes<Space>& sites) const = 0;
  // Sums over `rows` stored rows from row `first`.
  virtual Totals totals(int first, int rows) const = 0;
  Totals totals() const { return totals(0, rows_); }
  // Words per stored row in this layout, all planes together.
  virtual std::size_t row_words() const = 0;
  // The state of `rows` stored rows from `first` to and from host memory (row_words() per row):
  // what a slab's halo exchange moves.
  virtual void get_rows(int first, int rows, std::uint64_t* host) const = 0;
  virtual void put_rows(int first, int rows, const std::uint64_t* host) = 0;
  // Memory traffic of one site update if every word is read and written once from DRAM.
  virtual double bytes_per_update() const = 0;

 protected:
  // Copies n words between a device range and host memory, on the engine's instance.
  template <class Words>
  static void to_host(const Space& space, const Words& words, std::int64_t begin, std::int64_t n,
                      std::uint64_t* host) {
    const Kokkos::View<std::uint64_t*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> h(host, n);
    Kokkos::deep_copy(space, h, Kokkos::subview(words, std::make_pair(begin, begin + n)));
    space.fence();
  }
  template <class Words>
  static void from_host(const Space& space, const Words& words, std::int64_t begin, std::int64_t n,
                        const std::uint64_t* host) {
    const Kokkos::View<const std::uint64_t*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> h(host, n);
    Kokkos::deep_copy(space, Kokkos::subview(words, std::make_pair(begin, begin + n)), h);
    space.fence();
  }

 private:
  int rows_;
};

// Reduces per-word counts (mass, x momentum in half units, y momentum) over the lattice; an
// array reduction because Kokkos 3.4 has no multi-value reducers.
template <class Counts>
struct TotalsFunctor {
  using value_type = std::int64_t[];
  using size_type = unsigned;
  unsigned value_count = 3;
  Counts counts;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, std::int64_t* v) const {
    counts(i, v);
  }
  KOKKOS_INLINE_FUNCTION void init(std::int64_t* v) const { v[0] = v[1] = v[2] = 0; }
  KOKKOS_INLINE_FUNCTION void join(volatile std::int64_t* d, const volatile std::int64_t* s) const {
    for (int k = 0; k < 3; ++k) d[k] += s[k];
  }
  KOKKOS_INLINE_FUNCTION void join(std::int64_t* d, const std::int64_t* s) const {
    for (int k = 0; k < 3; ++k) d[k] += s[k];
  }
};

template <class Space, class Counts>
Totals reduce_totals(const Space& space, const std::string& label, std::int64_t begin,
                     std::int64_t end, const Counts& counts) {
  std::int64_t r[3] = {0, 0, 0};
  Kokkos::parallel_reduce(label, Kokkos::RangePolicy<Space>(space, begin, end),
                          TotalsFunctor<Counts>{3, counts}, r);
  return Totals{r[0], r[1], r[2]};
}

// Adds c particles of direction d (6 = rest) to the counts.
KOKKOS_INLINE_FUNCTION void add_counts(int d, int c, std::int64_t* v) {
  v[0] += c;
  if (d < 6) {
    v[1] += std::int64_t(c) * dir_cx2(d);
    v[2] += std::int64_t(c) * dir_cy(d);
  }
}

// ---------------------------------------------------------------------------------------------
// Byte kernels

// Read-only inputs go through the read-only data cache on GPUs.
using ReadOnly = Kokkos::MemoryTraits<Kokkos::RandomAccess>;

// Two words moved by one 16-byte access: halves the load and store instructions of a thread
// that owns consecutive words.
struct alignas(16) WordPair {
  std::uint64_t lo, hi;
};

// What the byte-layout kernels share: the two word buffers (also seen as word pairs), the
// table, the lattice and the step.
template <class Space>
struct ByteArgs {
  using Words = Kokkos::View<std::uint64_t*, typename Space::memory_space>;
  using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  Kokkos::View<const std::uint64_t*, typename Space::memory_space, ReadOnly> src;
  Words dst;
  Kokkos::View<const WordPair*, typename Space::memory_space, Unmanaged> src_pairs;
  Kokkos::View<WordPair*, typename Space::memory_space, Unmanaged> dst_pairs;
  Kokkos::View<const std::uint8_t*, typename Space::memory_space, ReadOnly> table;
  int nw, ny, rwords;   // words per row, rows, random words per row
  std::int64_t rword0;  // the random word of stored row 0 (StepParams::row0 * rwords)
  std::uint64_t seed;
  std::int64_t step;
  std::uint32_t force_q;
};

// Collides the 8 sites of a word of bytes by table lookup; bit j of chir and force belongs to
// byte j. Forced = false drops the forcing code where no site is forced, and takes the lookup
// of all 8 bytes at once (core::lookup_bytes, one table load per byte).
template <bool Forced, class Table>
KOKKOS_INLINE_FUNCTION std::uint64_t collide_word(const Table& table, std::uint64_t g,
                                                  unsigned chir, unsigned force) {
  if constexpr (!Forced) {
    return core::lookup_bytes(table.data(), g, chir);
  } else {
    std::uint64_t out = 0;
    for (int j = 0; j < 8; ++j) {
      const unsigned b = unsigned(g >> (8 * j)) & 0xffu;
      std::uint8_t o = table(b | (((chir >> j) & 1u) << 8));
      if (((force >> j) & 1u) && !(b & 0x80u)) o = apply_forcing(o);
      out |= std::uint64_t(o) << (8 * j);
    }
    return out;
  }
}

// Bit slicing of 8 words of site bytes. Stage C exchanges bit C of the word index with bit C
// of the bit index (the state bit within a byte): after the three stages word p holds state
// bit p of all 64 sites, site 8j + l (byte l of word j) at bit 8l + j. The stages commute and
// each is its own inverse, so the same call slices and unslices.
template <int C>
KOKKOS_INLINE_FUNCTION void exchange_index_bit(std::uint64_t (&w)[8]) {
  constexpr int s = 1 << C;
  constexpr std::uint64_t m = C == 0   ? 0x5555555555555555ull
                              : C == 1 ? 0x3333333333333333ull
                                       : 0x0f0f0f0f0f0f0f0full;
  for (int j = 0; j < 8; ++j)
    if (!(j & s)) {
      const std::uint64_t t = ((w[j] >> s) ^ w[j + s]) & m;
      w[j + s] ^= t;
      w[j] ^= t << s;
    }
}

KOKKOS_INLINE_FUNCTION void slice_bytes(std::uint64_t (&w)[8]) {
  exchange_index_bit<0>(w);
  exchange_index_bit<1>(w);
  exchange_index_bit<2>(w);
}

// Moves bit 8r + c to bit 8c + r: a per-site mask (bit s for site s) into the sliced order.
KOKKOS_INLINE_FUNCTION std::uint64_t transpose8x8(std::uint64_t x) {
  std::uint64_t t = (x ^ (x >> 7)) & 0x00aa00aa00aa00aaull;
  x ^= t ^ (t << 7);
  t = (x ^ (x >> 14)) & 0x0000cccc0000ccccull;
  x ^= t ^ (t << 14);
  t = (x ^ (x >> 28)) & 0x00000000f0f0f0f0ull;
  x ^= t ^ (t << 28);
  return x;
}

// Streams the words of one source row into the gathered words g: c[0] is the word left of the
// group, c[1..8] the group, then the word right of it. Dy and the row parity are compile-time
// so every shift is a constant.
template <int Dy, int Odd>
KOKKOS_INLINE_FUNCTION void gather_row(const std::uint64_t (&c)[10], std::uint64_t (&g)[8]) {
  constexpr std::uint64_t lane0 = 0x0101010101010101ull;
  for (int i = 0; i < 6; ++i)
    if (source_dy(i) == Dy)
      for (int j = 0; j < 8; ++j)
        g[j] |= shifted<8>(c[j], c[j + 1], c[j + 2], source_dx(i, Odd)) & (lane0 << i);
}

// Collision of a group of 8 words (64 sites) for GroupStep, two ways. chir and force carry
// bit s for site s of the group, as in the bit kernel.
// Bit-sliced: the bit kernel's boolean logic on planes sliced in registers.
template <Model M>
struct SlicedCollision {
  static constexpr const char* label = "hayate::fhp::step_bytes_sliced";
  template <class Table>
  KOKKOS_INLINE_FUNCTION static void apply(const Table&, std::uint64_t (&w)[8], std::uint64_t chir,
                                           std::uint64_t force) {
    slice_bytes(w);
    chir = transpose8x8(chir);
    if (force) force = transpose8x8(force);
    const std::uint64_t planes[7] = {w[0], w[1], w[2], w[3], w[4], w[5], w[6]};
    std::uint64_t out[7];
    collide_bits<M>(planes, w[7], chir, force, out);
    for (int i = 0; i < 7; ++i) w[i] = out[i];
    slice_bytes(w);
  }
};
// Table lookup per site.
struct TableCollision {
  static constexpr const char* label = "hayate::fhp::step_bytes_wide";
  template <bool Forced, class Table>
  KOKKOS_INLINE_FUNCTION static void words(const Table& table, std::uint64_t (&w)[8],
                                           std::uint64_t chir, std::uint64_t force) {
    for (int j = 0; j < 8; ++j)
      w[j] = collide_word<Forced>(table, w[j], unsigned(chir >> (8 * j)) & 0xffu,
                                  unsigned(force >> (8 * j)) & 0xffu);
  }
  template <class Table>
  KOKKOS_INLINE_FUNCTION static void apply(const Table& table, std::uint64_t (&w)[8],
                                           std::uint64_t chir, std::uint64_t force) {
    // Without forcing (the common case) the per-site forcing test is compiled out.
    if (force)
      words<true>(table, w, chir, force);
    else
      words<false>(table, w, chir, force);
  }
};

// One thread per 64 sites (8 words; the last group of a row may be shorter) of two rows,
// an even row y and the odd row y + 1: the two rows share two of their four source rows, so
// each row is read twice through L2 instead of three times (one row per thread was limited by
// L2 throughput, see docs/dev/decisions.md). All 40 loads issue before any store; one random
// word per row and group, exactly the bit kernel's.
template <class Space, class Collision>
struct GroupStep {
  ByteArgs<Space> a;

  static constexpr const char* label = Collision::label;
  // Rows come in pairs (the lattice has an even number of rows).
  static std::int64_t items(const LatticeShape& s) {
    return std::int64_t(s.ny / 2) * s.random_words_per_row();
  }

  // Collides and stores group `grp` of row y from its source rows (above, same, below).
  template <int Odd>
  KOKKOS_INLINE_FUNCTION void row(const std::uint64_t (&above)[10], const std::uint64_t (&same)[10],
                                  const std::uint64_t (&below)[10], const int y, const int grp,
                                  const std::int64_t row_start, const int k0, const int n,
                                  const bool pairs) const {
    constexpr std::uint64_t lane0 = 0x0101010101010101ull;
    std::uint64_t w[8];
    for (int j = 0; j < 8; ++j) w[j] = same[j + 1] & (lane0 * 0xc0u);  // rest and solid stay
    gather_row<-1, Odd>(above, w);
    gather_row<0, Odd>(same, w);
    gather_row<1, Odd>(below, w);
    const std::int64_t rword = a.rword0 + std::int64_t(y) * a.rwords + grp;
    const std::uint64_t chir = chirality_bits(a.seed, a.step, rword);
    const std::uint64_t force = forcing_bits(a.seed, a.step, rword, a.force_q);
    Collision::apply(a.table, w, chir, force);
    if (pairs) {
      for (int q = 0; q < 4; ++q)
        a.dst_pairs((row_start + k0) / 2 + q) = WordPair{w[2 * q], w[2 * q + 1]};
    } else {
      for (int j = 0; j < 8; ++j)
        if (j < n) a.dst(row_start + k0 + j) = w[j];
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t t) const {
    const int nw = a.nw, ny = a.ny, ng = a.rwords;
    int yp, grp;
    // 32-bit division where the index allows: 64-bit division is a long software sequence.
    if (std::int64_t(ny / 2) * ng <= std::int64_t(0xffffffff)) {
      const std::uint32_t u = std::uint32_t(t);
      yp = int(u / std::uint32_t(ng));
      grp = int(u - std::uint32_t(yp) * std::uint32_t(ng));
    } else {
      yp = int(t / ng);
      grp = int(t - std::int64_t(yp) * ng);
    }
    const int y = 2 * yp;  // even; y + 1 is odd and < ny
    const int k0 = 8 * grp;
    const int n = nw - k0 < 8 ? nw - k0 : 8;
    const int kl = k0 == 0 ? nw - 1 : k0 - 1;
    const int kr = k0 + n == nw ? 0 : k0 + n;
    const int ya = y == 0 ? ny - 1 : y - 1, yb = y + 2 == ny ? 0 : y + 2;
    // c[r][1..8]: the group in row r, c[r][0] and c[r][9]: its left and right neighbours. All
    // loads are unconditional and issue back to back. Rows of an even number of words start
    // 16-byte aligned, so a full group loads as 4 word pairs; a short group (the end of a row)
    // loads word by word, repeating the right neighbour past its end.
    std::uint64_t c[4][10];  // rows y - 1, y, y + 1, y + 2
    const std::int64_t rows[4] = {std::int64_t(ya) * nw, std::int64_t(y) * nw,
                                  std::int64_t(y + 1) * nw, std::int64_t(yb) * nw};
    const bool pairs = n == 8 && nw % 2 == 0;
    if (pairs) {
      for (int r = 0; r < 4; ++r)
        for (int q = 0; q < 4; ++q) {
          const WordPair p = a.src_pairs((rows[r] + k0) / 2 + q);
          c[r][2 * q + 1] = p.lo;
          c[r][2 * q + 2] = p.hi;
        }
    } else {
      for (int r = 0; r < 4; ++r)
        for (int j = 0; j < 8; ++j) c[r][j + 1] = a.src(rows[r] + (j < n ? k0 + j : kr));
    }
    for (int r = 0; r < 4; ++r) {
      c[r][0] = a.src(rows[r] + kl);
      c[r][9] = a.src(rows[r] + kr);
    }
    row<0>(c[0], c[1], c[2], y, grp, rows[1], k0, n, pairs);
    row<1>(c[1], c[2], c[3], y + 1, grp, rows[2], k0, n, pairs);
  }
};

// The byte layout with a grouped kernel: Collision is SlicedCollision<M> (bytes_sliced) or
// TableCollision (bytes_wide).
template <class Space, class Collision>
class ByteEngine final : public Engine<Space> {
 public:
  using Words = Kokkos::View<std::uint64_t*, typename Space::memory_space>;
  using Step = GroupStep<Space, Collision>;

  ByteEngine(const Space& space, Model model, LatticeShape shape, StepParams params)
      : Engine<Space>(shape.ny),
        space_(space),
        shape_(shape),
        params_(params),
        nw_(shape.nx / 8),
        a_(Kokkos::view_alloc(std::string("hayate::fhp::bytes_a"), Kokkos::WithoutInitializing),
           shape.sites() / 8),
        b_(Kokkos::view_alloc(std::string("hayate::fhp::bytes_b"), Kokkos::WithoutInitializing),
           shape.sites() / 8),
        table_("hayate::fhp::table", 512) {
    if (shape.nx % 8 != 0) throw std::logic_error("fhp byte kernels: nx must be a multiple of 8");
    if (shape.ny % 2 != 0) throw std::logic_error("fhp byte kernels: ny must be even");
    auto host = Kokkos::create_mirror_view(table_);
    const CollisionTable& t = table_of(model);
    for (int i = 0; i < 512; ++i) host(i) = t.out[i];
    Kokkos::deep_copy(space_, table_, host);
    space_.fence();  // the host copy is freed on return
  }

  void advance(std::int64_t step) override {
    // The pair views cover whole pairs only; kernels use them for rows of an even word count.
    using Args = ByteArgs<Space>;
    const std::size_t npairs = a_.extent(0) / 2;
    const decltype(Args::src_pairs) src_pairs(reinterpret_cast<const WordPair*>(a_.data()), npairs);
    const decltype(Args::dst_pairs) dst_pairs(reinterpret_cast<WordPair*>(b_.data()), npairs);
    const Step f{Args{a_, b_, src_pairs, dst_pairs, table_, nw_, shape_.ny,
                      shape_.random_words_per_row(),
                      std::int64_t(params_.row0) * shape_.random_words_per_row(), params_.seed,
                      step, params_.force_q}};
    Kokkos::parallel_for(Step::label, Kokkos::RangePolicy<Space>(space_, 0, Step::items(shape_)),
                         f);
    std::swap(a_, b_);
  }

  void load(const SiteBytes<Space>& sites) override {
    Kokkos::deep_copy(space_, bytes_of(a_), sites);
  }
  void store(const SiteBytes<Space>& sites) const override {
    Kokkos::deep_copy(space_, sites, bytes_of(a_));
  }

  Totals totals(int first, int rows) const override {
    const Words a = a_;
    return reduce_totals(
        space_, "hayate::fhp::totals_bytes", std::int64_t(first) * nw_,
        std::int64_t(first + rows) * nw_, KOKKOS_LAMBDA(const std::int64_t i, std::int64_t* v) {
          constexpr std::uint64_t lane0 = 0x0101010101010101ull;
          for (int d = 0; d < 7; ++d) add_counts(d, popcount64(a(i) & (lane0 << d)), v);
        });
  }

  std::size_t row_words() const override { return std::size_t(nw_); }
  void get_rows(int first, int rows, std::uint64_t* host) const override {
    Engine<Space>::to_host(space_, a_, std::int64_t(first) * nw_, std::int64_t(rows) * nw_, host);
  }
  void put_rows(int first, int rows, const std::uint64_t* host) override {
    Engine<Space>::from_host(space_, a_, std::int64_t(first) * nw_, std::int64_t(rows) * nw_, host);
  }

  double bytes_per_update() const override { return 2.0; }

 private:
  static SiteBytes<Space> bytes_of(const Words& w) {
    return Kokkos::View<std::uint8_t*, typename Space::memory_space, Kokkos::MemoryUnmanaged>(
        reinterpret_cast<std::uint8_t*>(w.data()), w.extent(0) * 8);
  }

  Space space_;
  LatticeShape shape_;
  StepParams params_;
  int nw_;
  Words a_, b_;
  Kokkos::View<std::uint8_t*, typename Space::memory_space> table_;
};

// ---------------------------------------------------------------------------------------------
// Bit-parallel kernel

template <class Space>
using Planes = Kokkos::View<std::uint64_t**, Kokkos::LayoutRight, typename Space::memory_space>;

template <class Space, Model M>
struct BitStep {
  Kokkos::View<const std::uint64_t**, Kokkos::LayoutRight, typename Space::memory_space, ReadOnly>
      src;
  Planes<Space> dst;
  Kokkos::View<const std::uint64_t*, typename Space::memory_space, ReadOnly> solid;
  int nw, ny;
  std::int64_t word0;  // the random word of stored row 0 (StepParams::row0 * nw)
  std::uint64_t seed;
  std::int64_t step;
  std::uint32_t force_q;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t t) const {
    const int y = int(t / nw), k = int(t % nw);
    const std::int64_t rword = word0 + t;
    const int odd = y & 1;
    const int kl = k == 0 ? nw - 1 : k - 1, kr = k == nw - 1 ? 0 : k + 1;
    // Starts of the rows above, at and below y, wrapped without a division per direction.
    const std::int64_t rows[3] = {std::int64_t(y == 0 ? ny - 1 : y - 1) * nw, std::int64_t(y) * nw,
                                  std::int64_t(y + 1 == ny ? 0 : y + 1) * nw};
    std::uint64_t n[7];
    for (int i = 0; i < 6; ++i) {
      const std::int64_t row = rows[source_dy(i) + 1];
      const int dx = source_dx(i, odd);
      const std::uint64_t c = src(i, row + k);
      const std::uint64_t l = dx < 0 ? src(i, row + kl) : 0;
      const std::uint64_t r = dx > 0 ? src(i, row + kr) : 0;
      n[i] = shifted<1>(l, c, r, dx);
    }
    n[6] = src(6, t);
    const std::uint64_t chir = chirality_bits(seed, step, rword);
    const std::uint64_t force = forcing_bits(seed, step, rword, force_q);
    std::uint64_t out[7];
    collide_bits<M>(n, solid(t), chir, force, out);
    for (int i = 0; i < 7; ++i) dst(i, t) = out[i];
  }
};

template <class Space, Model M>
class BitEngine final : public Engine<Space> {
 public:
  using Words = Kokkos::View<std::uint64_t*, typename Space::memory_space>;

  BitEngine(const Space& space, LatticeShape shape, StepParams params)
      : Engine<Space>(shape.ny),
        space_(space),
        shape_(shape),
        params_(params),
        nw_(shape.nx / 64),
        a_(Kokkos::view_alloc(std::string("hayate::fhp::planes_a"), Kokkos::WithoutInitializing), 7,
           shape.sites() / 64),
        b_(Kokkos::view_alloc(std::string("hayate::fhp::planes_b"), Kokkos::WithoutInitializing), 7,
           shape.sites() / 64),
        solid_("hayate::fhp::solid", shape.sites() / 64) {
    if (shape.nx % 64 != 0) throw std::logic_error("fhp bits kernel: nx must be a multiple of 64");
  }

  void advance(std::int64_t step) override {
    BitStep<Space, M> f{a_,           b_,        solid_,
                        nw_,          shape_.ny, std::int64_t(params_.row0) * nw_,
                        params_.seed, step,      params_.force_q};
    Kokkos::parallel_for("hayate::fhp::step_bits",
                         Kokkos::RangePolicy<Space>(space_, 0, shape_.sites() / 64), f);
    std::swap(a_, b_);
  }

  void load(const SiteBytes<Space>& sites) override {
    const Planes<Space> a = a_;
    const Words solid = solid_;
    Kokkos::parallel_for(
        "hayate::fhp::bytes_to_bits", Kokkos::RangePolicy<Space>(space_, 0, shape_.sites() / 64),
        KOKKOS_LAMBDA(const std::int64_t t) {
          std::uint64_t p[8] = {0, 0, 0, 0, 0, 0, 0, 0};
          for (int j = 0; j < 64; ++j) {
            const unsigned b = sites(t * 64 + j);
            for (int i = 0; i < 8; ++i) p[i] |= std::uint64_t((b >> i) & 1u) << j;
          }
          for (int i = 0; i < 7; ++i) a(i, t) = p[i];
          solid(t) = p[7];
        });
  }

  void store(const SiteBytes<Space>& sites) const override {
    const Planes<Space> a = a_;
    const Words solid = solid_;
    Kokkos::parallel_for(
        "hayate::fhp::bits_to_bytes", Kokkos::RangePolicy<Space>(space_, 0, shape_.sites() / 64),
        KOKKOS_LAMBDA(const std::int64_t t) {
          std::uint64_t p[8];
          for (int i = 0; i < 7; ++i) p[i] = a(i, t);
          p[7] = solid(t);
          for (int j = 0; j < 64; ++j) {
            unsigned b = 0;
            for (int i = 0; i < 8; ++i) b |= unsigned((p[i] >> j) & 1u) << i;
            sites(t * 64 + j) = std::uint8_t(b);
          }
        });
  }

  Totals totals(int first, int rows) const override {
    const Planes<Space> a = a_;
    return reduce_totals(
        space_, "hayate::fhp::totals_bits", std::int64_t(first) * nw_,
        std::int64_t(first + rows) * nw_, KOKKOS_LAMBDA(const std::int64_t w, std::int64_t* v) {
          for (int d = 0; d < 7; ++d) add_counts(d, popcount64(a(d, w)), v);
        });
  }

  // The 7 planes of a row (the solid plane does not change and is not moved).
  std::size_t row_words() const override { return 7 * std::size_t(nw_); }
  void get_rows(int first, int rows, std::uint64_t* host) const override {
    const std::int64_t n = std::int64_t(rows) * nw_;
    for (int i = 0; i < 7; ++i)
      Engine<Space>::to_host(space_, Kokkos::subview(a_, i, Kokkos::ALL), std::int64_t(first) * nw_,
                             n, host + i * n);
  }
  void put_rows(int first, int rows, const std::uint64_t* host) override {
    const std::int64_t n = std::int64_t(rows) * nw_;
    for (int i = 0; i < 7; ++i)
      Engine<Space>::from_host(space_, Kokkos::subview(a_, i, Kokkos::ALL),
                               std::int64_t(first) * nw_, n, host + i * n);
  }

  // 7 planes read and written, the solid plane read: 15 bits per site.
  double bytes_per_update() const override { return 15.0 / 8.0; }

 private:
  Space space_;
  LatticeShape shape_;
  StepParams params_;
  int nw_;
  Planes<Space> a_, b_;
  Words solid_;
};

// Calls f(std::integral_constant<Model, M>) for the runtime model: the collision logic is
// compiled per model.
template <class F>
auto dispatch_model(Model model, F&& f) {
  switch (model) {
    case Model::fhp1:
      return f(std::integral_constant<Model, Model::fhp1>{});
    case Model::fhp2:
      return f(std::integral_constant<Model, Model::fhp2>{});
    case Model::fhp3:
      return f(std::integral_constant<Model, Model::fhp3>{});
  }
  throw std::logic_error("fhp: unknown model");
}

// The engine of `kernel` for `model`, launching on `space`.
template <class Space>
std::unique_ptr<Engine<Space>> make_engine(const Space& space, Kernel kernel, Model model,
                                           LatticeShape shape, StepParams params) {
  return dispatch_model(model, [&](auto m) -> std::unique_ptr<Engine<Space>> {
    constexpr Model M = decltype(m)::value;
    switch (kernel) {
      case Kernel::bytes_wide:
        return std::make_unique<ByteEngine<Space, TableCollision>>(space, model, shape, params);
      case Kernel::bytes_sliced:
        return std::make_unique<ByteEngine<Space, SlicedCollision<M>>>(space, model, shape, params);
      case Kernel::bits:
        return std::make_unique<BitEngine<Space, M>>(space, shape, params);
    }
    throw std::logic_error("fhp: unknown kernel");
  });
}

// Every engine is compiled once, in fhp_kernels.cpp (exec/instantiate.hpp says why).
#define HAYATE_FHP_ENGINE_KERNELS(EXTERN, S)                                                       \
  EXTERN template std::unique_ptr<Engine<S>> make_engine<S>(const S&, Kernel, Model, LatticeShape, \
                                                            StepParams);
#ifndef HAYATE_FHP_DEFINE_KERNELS
HAYATE_FOR_EACH_SPACE(HAYATE_FHP_ENGINE_KERNELS, extern)
#endif

}  // namespace hayate::fhp

#pragma once
// The two FHP kernels, both fused collide+stream with a pull and two buffers:
//   bytes: one byte per site (7 state bits + solid bit), 8 sites per 64-bit word and thread;
//          streaming gathers the six neighbour words, collision is a table lookup per byte.
//   bits:  multi-spin coding, 64 sites per word and direction (7 planes + a solid plane), one
//          thread per word; collision is the table's boolean expansion (fhp_bitlogic.hpp).
// Both draw the same random bits per site (fhp_lattice.hpp), so they are bitwise identical.
// Both convert to and from the canonical site bytes (row-major, one byte per site) that
// initial conditions, analysis and checkpoints use.
#include "fhp/fhp_bitlogic.hpp"
#include "fhp/fhp_lattice.hpp"
#include "fhp/fhp_rules.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace hayate::fhp {

enum class Kernel { bytes, bits };

inline std::string kernel_name(Kernel k) {
  return k == Kernel::bytes ? "bytes" : "bits";
}

struct StepParams {
  std::uint64_t seed = 1;
  std::uint32_t force_q = 0;  // forcing probability in units of 1/65536
};

// Site bytes in row-major order, one per site: the exchange format between kernels.
template <class Space>
using SiteBytes = Kokkos::View<std::uint8_t*, typename Space::memory_space>;

template <class Space>
class Engine {
 public:
  virtual ~Engine() = default;
  // Computes step `step` (0-based): collide and stream every site once.
  virtual void advance(std::int64_t step) = 0;
  virtual void load(const SiteBytes<Space>& sites) = 0;
  virtual void store(const SiteBytes<Space>& sites) const = 0;
  virtual Totals totals() const = 0;
  // Memory traffic of one site update if every word is read and written once from DRAM.
  virtual double bytes_per_update() const = 0;
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
Totals reduce_totals(const std::string& label, std::int64_t n, const Counts& counts) {
  std::int64_t r[3] = {0, 0, 0};
  Kokkos::parallel_reduce(label, Kokkos::RangePolicy<Space>(0, n), TotalsFunctor<Counts>{3, counts},
                          r);
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
// Byte kernel

// Read-only inputs go through the read-only data cache on GPUs.
using ReadOnly = Kokkos::MemoryTraits<Kokkos::RandomAccess>;

template <class Space>
struct ByteStep {
  using Words = Kokkos::View<std::uint64_t*, typename Space::memory_space>;
  Kokkos::View<const std::uint64_t*, typename Space::memory_space, ReadOnly> src;
  Words dst;
  Kokkos::View<const std::uint8_t*, typename Space::memory_space, ReadOnly> table;
  int nw, ny, rwords;
  std::uint64_t seed;
  std::int64_t step;
  std::uint32_t force_q;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t t) const {
    const int y = int(t / nw), k = int(t % nw);
    const int odd = y & 1;
    const int kl = k == 0 ? nw - 1 : k - 1, kr = k == nw - 1 ? 0 : k + 1;
    std::uint64_t w[3][3];  // [dy + 1][dx + 1]
    for (int dy = -1; dy <= 1; ++dy) {
      const int yy = (y + dy + ny) % ny;
      const std::int64_t row = std::int64_t(yy) * nw;
      w[dy + 1][0] = src(row + kl);
      w[dy + 1][1] = src(row + k);
      w[dy + 1][2] = src(row + kr);
    }
    constexpr std::uint64_t lane0 = 0x0101010101010101ull;
    std::uint64_t g = w[1][1] & (lane0 * 0xc0u);  // rest particle and solid flag stay
    for (int i = 0; i < 6; ++i) {
      const int r = source_dy(i) + 1;
      g |= shifted<8>(w[r][0], w[r][1], w[r][2], source_dx(i, odd)) & (lane0 << i);
    }
    const std::int64_t rword = std::int64_t(y) * rwords + (k >> 3);
    const int shift = (k & 7) * 8;
    const unsigned chir = unsigned(chirality_bits(seed, step, rword) >> shift) & 0xffu;
    const unsigned force = unsigned(forcing_bits(seed, step, rword, force_q) >> shift) & 0xffu;
    std::uint64_t out = 0;
    for (int j = 0; j < 8; ++j) {
      const unsigned b = unsigned(g >> (8 * j)) & 0xffu;
      std::uint8_t o = table(b | (((chir >> j) & 1u) << 8));
      if (((force >> j) & 1u) && !(b & 0x80u)) o = apply_forcing(o);
      out |= std::uint64_t(o) << (8 * j);
    }
    dst(t) = out;
  }
};

template <class Space>
class ByteEngine final : public Engine<Space> {
 public:
  using Words = Kokkos::View<std::uint64_t*, typename Space::memory_space>;

  ByteEngine(Model model, LatticeShape shape, StepParams params)
      : shape_(shape),
        params_(params),
        nw_(shape.nx / 8),
        a_(Kokkos::view_alloc(std::string("hayate::fhp::bytes_a"), Kokkos::WithoutInitializing),
           shape.sites() / 8),
        b_(Kokkos::view_alloc(std::string("hayate::fhp::bytes_b"), Kokkos::WithoutInitializing),
           shape.sites() / 8),
        table_("hayate::fhp::table", 512) {
    if (shape.nx % 8 != 0) throw std::logic_error("fhp bytes kernel: nx must be a multiple of 8");
    auto host = Kokkos::create_mirror_view(table_);
    const CollisionTable& t = table_of(model);
    for (int i = 0; i < 512; ++i) host(i) = t.out[i];
    Kokkos::deep_copy(table_, host);
  }

  void advance(std::int64_t step) override {
    ByteStep<Space> f{a_,           b_,        table_,
                      nw_,          shape_.ny, shape_.random_words_per_row(),
                      params_.seed, step,      params_.force_q};
    Kokkos::parallel_for("hayate::fhp::step_bytes",
                         Kokkos::RangePolicy<Space>(0, shape_.sites() / 8), f);
    std::swap(a_, b_);
  }

  void load(const SiteBytes<Space>& sites) override { Kokkos::deep_copy(bytes_of(a_), sites); }
  void store(const SiteBytes<Space>& sites) const override {
    Kokkos::deep_copy(sites, bytes_of(a_));
  }

  Totals totals() const override {
    const Words a = a_;
    return reduce_totals<Space>(
        "hayate::fhp::totals_bytes", shape_.sites() / 8,
        KOKKOS_LAMBDA(const std::int64_t i, std::int64_t* v) {
          constexpr std::uint64_t lane0 = 0x0101010101010101ull;
          for (int d = 0; d < 7; ++d) add_counts(d, popcount64(a(i) & (lane0 << d)), v);
        });
  }

  double bytes_per_update() const override { return 2.0; }

 private:
  static SiteBytes<Space> bytes_of(const Words& w) {
    return Kokkos::View<std::uint8_t*, typename Space::memory_space, Kokkos::MemoryUnmanaged>(
        reinterpret_cast<std::uint8_t*>(w.data()), w.extent(0) * 8);
  }

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
  std::uint64_t seed;
  std::int64_t step;
  std::uint32_t force_q;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t t) const {
    const int y = int(t / nw), k = int(t % nw);
    const int odd = y & 1;
    const int kl = k == 0 ? nw - 1 : k - 1, kr = k == nw - 1 ? 0 : k + 1;
    std::uint64_t n[7];
    for (int i = 0; i < 6; ++i) {
      const int yy = (y + source_dy(i) + ny) % ny;
      const std::int64_t row = std::int64_t(yy) * nw;
      const int dx = source_dx(i, odd);
      const std::uint64_t c = src(i, row + k);
      const std::uint64_t l = dx < 0 ? src(i, row + kl) : 0;
      const std::uint64_t r = dx > 0 ? src(i, row + kr) : 0;
      n[i] = shifted<1>(l, c, r, dx);
    }
    n[6] = src(6, t);
    const std::uint64_t chir = chirality_bits(seed, step, t);
    const std::uint64_t force = forcing_bits(seed, step, t, force_q);
    std::uint64_t out[7];
    collide_bits<M>(n, solid(t), chir, force, out);
    for (int i = 0; i < 7; ++i) dst(i, t) = out[i];
  }
};

template <class Space, Model M>
class BitEngine final : public Engine<Space> {
 public:
  using Words = Kokkos::View<std::uint64_t*, typename Space::memory_space>;

  BitEngine(LatticeShape shape, StepParams params)
      : shape_(shape),
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
    BitStep<Space, M> f{a_, b_, solid_, nw_, shape_.ny, params_.seed, step, params_.force_q};
    Kokkos::parallel_for("hayate::fhp::step_bits",
                         Kokkos::RangePolicy<Space>(0, shape_.sites() / 64), f);
    std::swap(a_, b_);
  }

  void load(const SiteBytes<Space>& sites) override {
    const Planes<Space> a = a_;
    const Words solid = solid_;
    Kokkos::parallel_for(
        "hayate::fhp::bytes_to_bits", Kokkos::RangePolicy<Space>(0, shape_.sites() / 64),
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
        "hayate::fhp::bits_to_bytes", Kokkos::RangePolicy<Space>(0, shape_.sites() / 64),
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

  Totals totals() const override {
    const Planes<Space> a = a_;
    return reduce_totals<Space>(
        "hayate::fhp::totals_bits", shape_.sites() / 64,
        KOKKOS_LAMBDA(const std::int64_t w, std::int64_t* v) {
          for (int d = 0; d < 7; ++d) add_counts(d, popcount64(a(d, w)), v);
        });
  }

  // 7 planes read and written, the solid plane read: 15 bits per site.
  double bytes_per_update() const override { return 15.0 / 8.0; }

 private:
  LatticeShape shape_;
  StepParams params_;
  int nw_;
  Planes<Space> a_, b_;
  Words solid_;
};

template <class Space>
std::unique_ptr<Engine<Space>> make_engine(Kernel kernel, Model model, LatticeShape shape,
                                           StepParams params) {
  if (kernel == Kernel::bytes) return std::make_unique<ByteEngine<Space>>(model, shape, params);
  switch (model) {
    case Model::fhp1:
      return std::make_unique<BitEngine<Space, Model::fhp1>>(shape, params);
    case Model::fhp2:
      return std::make_unique<BitEngine<Space, Model::fhp2>>(shape, params);
    case Model::fhp3:
      return std::make_unique<BitEngine<Space, Model::fhp3>>(shape, params);
  }
  throw std::logic_error("fhp: unknown model");
}

}  // namespace hayate::fhp

// All kernels against a plain serial reference (site loops with explicit neighbour indices),
// on every backend; exact conservation with periodic boundaries; every kernel on the
// execution-space instance it was given.
#include "compat/kokkos_compat.hpp"
#include "exec/exec_traits.hpp"
#include "fhp/fhp_fields.hpp"
#include "fhp/fhp_init.hpp"
#include "fhp/fhp_kernels.hpp"
#include "launch_log.hpp"
#include "parallel/comm.hpp"
#include "test_spaces.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace hayate::fhp {
namespace {

// One step on the host: every site pulls c_i from its neighbour at site - c_i, then collides
// with the table, then forcing. Neighbours use the hexagonal offsets directly.
std::vector<std::uint8_t> reference_step(const std::vector<std::uint8_t>& in, LatticeShape shape,
                                         Model model, StepParams params, std::int64_t step) {
  const auto& table = table_of(model);
  std::vector<std::uint8_t> out(in.size());
  const int nx = shape.nx, ny = shape.ny;
  // Physical neighbour of (x, y) along c_i.
  auto neighbour = [&](int x, int y, int i, int& nxo, int& nyo) {
    const bool odd = y & 1;
    int dx = 0, dy = 0;
    switch (i) {
      case 0:
        dx = 1;
        break;
      case 3:
        dx = -1;
        break;
      case 1:
        dy = 1;
        dx = odd ? 1 : 0;
        break;
      case 2:
        dy = 1;
        dx = odd ? 0 : -1;
        break;
      case 4:
        dy = -1;
        dx = odd ? 0 : -1;
        break;
      case 5:
        dy = -1;
        dx = odd ? 1 : 0;
        break;
    }
    nxo = (x + dx + nx) % nx;
    nyo = (y + dy + ny) % ny;
  };
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x) {
      const std::uint8_t own = in[std::size_t(y) * nx + x];
      unsigned g = own & 0xc0u;
      for (int i = 0; i < 6; ++i) {
        int sx, sy;
        neighbour(x, y, (i + 3) % 6, sx, sy);  // the site a particle along c_i comes from
        g |= in[std::size_t(sy) * nx + sx] & (1u << i);
      }
      const std::int64_t word = std::int64_t(y) * shape.random_words_per_row() + x / 64;
      const unsigned chir = unsigned(chirality_bits(params.seed, step, word) >> (x % 64)) & 1u;
      const unsigned force =
          unsigned(forcing_bits(params.seed, step, word, params.force_q) >> (x % 64)) & 1u;
      std::uint8_t o = table.out[g | (chir << 8)];
      if (force && !(g & 0x80u)) o = apply_forcing(o);
      out[std::size_t(y) * nx + x] = o;
    }
  return out;
}

std::vector<std::uint8_t> random_sites(LatticeShape shape, Model model, double solid_fraction,
                                       std::uint64_t seed) {
  std::vector<std::uint8_t> s(std::size_t(shape.sites()));
  const unsigned mask = model == Model::fhp1 ? 0x3fu : 0x7fu;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool solid = util::uniform01(seed, i, 99) < solid_fraction;
    s[i] = solid ? 0x80u : std::uint8_t(util::random_bits(seed, i, 0) & mask);
  }
  return s;
}

template <class Space>
SiteBytes<Space> to_device(const std::vector<std::uint8_t>& h) {
  SiteBytes<Space> d("sites", h.size());
  auto m = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < h.size(); ++i) m(i) = h[i];
  Kokkos::deep_copy(d, m);
  return d;
}

template <class Space>
std::vector<std::uint8_t> to_host(Engine<Space>& e, std::size_t n) {
  SiteBytes<Space> d("sites", n);
  e.store(d);
  auto m = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d);
  return std::vector<std::uint8_t>(m.data(), m.data() + n);
}

Totals host_totals(const std::vector<std::uint8_t>& s) {
  Totals t;
  for (auto b : s)
    for (int d = 0; d < 7; ++d)
      if ((b >> d) & 1u) {
        ++t.mass;
        if (d < 6) {
          t.px2 += dir_cx2(d);
          t.py += dir_cy(d);
        }
      }
  return t;
}

// Loads `host` into every engine, then advances them `steps` steps beside the reference and
// requires the same bytes after each (and, with totals, the same conserved sums).
template <class Space>
void compare_with_reference(const std::vector<std::unique_ptr<Engine<Space>>>& engines,
                            std::vector<std::uint8_t> host, LatticeShape shape, Model model,
                            StepParams params, int steps, const std::string& what,
                            bool totals = false) {
  for (const auto& e : engines) e->load(to_device<Space>(host));
  for (std::int64_t step = 0; step < steps; ++step) {
    host = reference_step(host, shape, model, params, step);
    for (std::size_t e = 0; e < engines.size(); ++e) {
      engines[e]->advance(step);
      ASSERT_EQ(to_host(*engines[e], host.size()), host)
          << what << ", " << model_name(model) << ", engine " << e << ", step " << step;
      if (totals) EXPECT_EQ(engines[e]->totals(), host_totals(host));
    }
  }
}

template <class Space>
class FhpKernels : public ::testing::Test {};
HAYATE_SPACE_TEST_SUITE(FhpKernels);

TYPED_TEST(FhpKernels, AllKernelsMatchSerialReference) {
  using Space = TypeParam;
  const LatticeShape shape{128, 18};
  // With and without forcing: kernels compile the unforced case separately.
  for (const std::uint32_t force_q : {9000u, 0u})
    for (const Model model : {Model::fhp1, Model::fhp2, Model::fhp3}) {
      const StepParams params{11, force_q};
      std::vector<std::unique_ptr<Engine<Space>>> engines;
      for (const Kernel kernel : {Kernel::bytes_wide, Kernel::bytes_sliced, Kernel::bits})
        engines.push_back(make_engine(Space(), kernel, model, shape, params));
      compare_with_reference(engines, random_sites(shape, model, 0.08, 5), shape, model, params, 12,
                             "forcing " + std::to_string(force_q), true);
    }
}

// Rows that are not a whole number of 64-site groups: the 64-site kernels' last group per row
// is short (72, 136 and 80 columns; 80 also mixes full groups loaded as word pairs with a
// short one), a row is one short group (40), or the only word is its own left and right
// neighbour (8). Two rows: the grouped kernels' row pair reads each row twice, as the rows
// above and below.
TYPED_TEST(FhpKernels, ByteKernelsMatchReferenceOnNarrowRows) {
  using Space = TypeParam;
  for (const int ny : {6, 2})
    for (const int nx : {72, 40, 8, 136, 80})
      for (const Model model : {Model::fhp1, Model::fhp2, Model::fhp3}) {
        const LatticeShape shape{nx, ny};
        const StepParams params{4, 20000};
        std::vector<std::unique_ptr<Engine<Space>>> engines;
        for (const Kernel kernel : {Kernel::bytes_wide, Kernel::bytes_sliced})
          engines.push_back(make_engine(Space(), kernel, model, shape, params));
        compare_with_reference(engines, random_sites(shape, model, 0.05, 9), shape, model, params,
                               6, std::to_string(nx) + " columns, " + std::to_string(ny) + " rows");
      }
}

// A lattice split into row slabs, each stepped by its own engine with two halo rows on either
// side that the neighbouring slabs refresh after every step (what each rank of a distributed
// run does), steps exactly like the whole lattice: random bits keyed by global row, row parity
// kept, every kernel, sums over the slabs' own rows adding up.
TYPED_TEST(FhpKernels, SlabsWithHaloRowsStepLikeTheWholeLattice) {
  using Space = TypeParam;
  const LatticeShape shape{128, 28};
  constexpr int halo = 2, slabs = 3;
  for (const Model model : {Model::fhp1, Model::fhp3})
    for (const Kernel kernel : {Kernel::bytes_wide, Kernel::bytes_sliced, Kernel::bits}) {
      const StepParams whole_params{7, 12000};
      auto whole = make_engine(Space(), kernel, model, shape, whole_params);
      const auto start = random_sites(shape, model, 0.06, 21);
      whole->load(to_device<Space>(start));
      std::vector<core::RowSlab> slab;
      std::vector<std::unique_ptr<Engine<Space>>> part;
      for (int r = 0; r < slabs; ++r) {
        slab.push_back(core::row_slab(shape.ny, 2, slabs, r));
        StepParams p = whole_params;
        p.row0 = slab[r].first - halo;
        const LatticeShape local{shape.nx, slab[r].count + 2 * halo};
        std::vector<std::uint8_t> rows(std::size_t(local.sites()));
        for (int j = 0; j < local.ny; ++j) {
          const int y = (p.row0 + j + shape.ny) % shape.ny;
          std::copy_n(start.begin() + std::ptrdiff_t(y) * shape.nx, shape.nx,
                      rows.begin() + std::ptrdiff_t(j) * shape.nx);
        }
        part.push_back(make_engine(Space(), kernel, model, local, p));
        part[r]->load(to_device<Space>(rows));
      }
      for (std::int64_t step = 0; step < 8; ++step) {
        whole->advance(step);
        for (auto& e : part) e->advance(step);
        const std::size_t words = part[0]->row_words() * halo;
        std::vector<std::vector<std::uint64_t>> low(slabs, std::vector<std::uint64_t>(words)),
            high = low;
        for (int r = 0; r < slabs; ++r) {
          part[r]->get_rows(halo, halo, low[r].data());
          part[r]->get_rows(slab[r].count, halo, high[r].data());
        }
        for (int r = 0; r < slabs; ++r) {
          part[r]->put_rows(slab[r].count + halo, halo, low[(r + 1) % slabs].data());
          part[r]->put_rows(0, halo, high[(r + slabs - 1) % slabs].data());
        }
        const auto expect = to_host(*whole, std::size_t(shape.sites()));
        Totals sum;
        for (int r = 0; r < slabs; ++r) {
          const auto got = to_host(*part[r], std::size_t(slab[r].count + 2 * halo) * shape.nx);
          const std::vector<std::uint8_t> own(got.begin() + halo * shape.nx,
                                              got.end() - halo * shape.nx);
          const std::vector<std::uint8_t> want(
              expect.begin() + std::ptrdiff_t(slab[r].first) * shape.nx,
              expect.begin() + std::ptrdiff_t(slab[r].first + slab[r].count) * shape.nx);
          ASSERT_EQ(own, want) << kernel_name(kernel) << ", " << model_name(model) << ", slab " << r
                               << ", step " << step;
          const Totals t = part[r]->totals(halo, slab[r].count);
          sum.mass += t.mass;
          sum.px2 += t.px2;
          sum.py += t.py;
        }
        EXPECT_EQ(sum, whole->totals());
      }
    }
}

TEST(FhpSlabs, RowSlabsCoverTheRowsInWholePairs) {
  for (const int rows : {2, 8, 30, 1024})
    for (int ranks = 1; ranks <= 7 && 2 * ranks <= rows; ++ranks) {
      int next = 0, smallest = rows, largest = 0;
      for (int r = 0; r < ranks; ++r) {
        const core::RowSlab s = core::row_slab(rows, 2, ranks, r);
        EXPECT_EQ(s.first, next) << rows << " rows, " << ranks << " ranks, rank " << r;
        EXPECT_EQ(s.count % 2, 0);
        next = s.first + s.count;
        smallest = std::min(smallest, s.count);
        largest = std::max(largest, s.count);
      }
      EXPECT_EQ(next, rows);
      EXPECT_LE(largest - smallest, 2) << rows << " rows, " << ranks << " ranks";
    }
}

// Stand-ins for core::ExecTraits of a GPU and a host backend: the rule must hold for both
// whichever backends this build has.
struct GpuTraits {
  static constexpr bool is_gpu = true;
};
struct HostTraits {
  static constexpr bool is_gpu = false;
};

TEST(FhpKernelChoice, AutoFollowsTheMeasuredWinners) {
  // GPU: the bit kernel for every model; host: table lookups except for FHP-I.
  for (const Model model : {Model::fhp1, Model::fhp2, Model::fhp3})
    EXPECT_EQ(auto_kernel<GpuTraits>(model, 128), Kernel::bits) << model_name(model);
  EXPECT_EQ(auto_kernel<HostTraits>(Model::fhp1, 128), Kernel::bits);
  EXPECT_EQ(auto_kernel<HostTraits>(Model::fhp2, 128), Kernel::bytes_wide);
  EXPECT_EQ(auto_kernel<HostTraits>(Model::fhp3, 4096), Kernel::bytes_wide);
  // Rows that are not whole 64-bit words of sites cannot use the bit kernel anywhere.
  EXPECT_EQ(auto_kernel<GpuTraits>(Model::fhp1, 72), Kernel::bytes_wide);
  EXPECT_EQ(auto_kernel<HostTraits>(Model::fhp1, 72), Kernel::bytes_wide);
  // The real traits of a host backend give the host rule.
  using Host = core::ExecTraits<Kokkos::DefaultHostExecutionSpace>;
  EXPECT_EQ(auto_kernel<Host>(Model::fhp3, 128), Kernel::bytes_wide);
  for (const Kernel k : {Kernel::bytes_wide, Kernel::bytes_sliced, Kernel::bits})
    EXPECT_EQ(parse_kernel(kernel_name(k)), k);
  EXPECT_THROW(parse_kernel("bytes"), std::logic_error);
}

// out(i) = the table lookup of words(i) with high(i), in a kernel (a free function: nvcc rejects
// device lambdas inside gtest's private TestBody).
template <class Table, class Words, class High>
void lookup_words(const Table& table, const Words& words, const High& high, const Words& out) {
  using Space = typename Words::execution_space;
  Kokkos::parallel_for(
      "lookup", Kokkos::RangePolicy<Space>(0, words.extent(0)),
      KOKKOS_LAMBDA(const int i) { out(i) = core::lookup_bytes(table.data(), words(i), high(i)); });
}

// The byte-table lookup of a whole word, as kernels on Space run it (on CUDA devices the
// byte-permute form of backends/cuda/byte_table.hpp), against the portable loop on the host.
TYPED_TEST(FhpKernels, WordLookupMatchesPortableLoop) {
  using Space = TypeParam;
  using Memory = typename Space::memory_space;
  const int n = 4096;
  for (const Model model : {Model::fhp1, Model::fhp3}) {
    Kokkos::View<std::uint8_t*, Memory> table("table", 512);
    Kokkos::View<std::uint64_t*, Memory> words("words", n), out("out", n);
    Kokkos::View<unsigned*, Memory> high("high", n);
    auto table_h = Kokkos::create_mirror_view(table);
    auto words_h = Kokkos::create_mirror_view(words);
    auto high_h = Kokkos::create_mirror_view(high);
    for (int i = 0; i < 512; ++i) table_h(i) = table_of(model).out[i];
    for (int i = 0; i < n; ++i) {
      words_h(i) = util::random_bits(31, std::uint64_t(i), 0);
      high_h(i) = unsigned(util::random_bits(31, std::uint64_t(i), 1)) & 0xffu;
    }
    Kokkos::deep_copy(table, table_h);
    Kokkos::deep_copy(words, words_h);
    Kokkos::deep_copy(high, high_h);
    lookup_words(table, words, high, out);
    auto out_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(out_h(i), core::lookup_bytes_portable(table_h.data(), words_h(i), high_h(i)))
          << model_name(model) << " word " << i;
  }
}

TEST(FhpSlicing, SliceBytesGathersStateBitsIntoPlanes) {
  std::uint64_t w[8], planes[8];
  for (int j = 0; j < 8; ++j) w[j] = planes[j] = util::random_bits(21, j, 0);
  slice_bytes(planes);
  for (int s = 0; s < 64; ++s)
    for (int p = 0; p < 8; ++p) {
      const unsigned site_bit = unsigned(w[s / 8] >> (8 * (s % 8) + p)) & 1u;
      ASSERT_EQ(unsigned(planes[p] >> (8 * (s % 8) + s / 8)) & 1u, site_bit) << s << " " << p;
    }
  slice_bytes(planes);
  for (int j = 0; j < 8; ++j) EXPECT_EQ(planes[j], w[j]);
  const std::uint64_t mask = util::random_bits(22, 0, 0);
  const std::uint64_t moved = transpose8x8(mask);
  for (int s = 0; s < 64; ++s)
    EXPECT_EQ((moved >> (8 * (s % 8) + s / 8)) & 1u, (mask >> s) & 1u) << s;
}

TYPED_TEST(FhpKernels, PeriodicRunsConserveMassAndMomentumExactly) {
  using Space = TypeParam;
  const LatticeShape shape{192, 64};
  for (const Kernel kernel : {Kernel::bytes_wide, Kernel::bytes_sliced, Kernel::bits})
    for (const Model model : {Model::fhp1, Model::fhp2, Model::fhp3}) {
      auto e = make_engine(Space(), kernel, model, shape, StepParams{3, 0});
      const auto host = random_sites(shape, model, 0.0, 17);
      e->load(to_device<Space>(host));
      const Totals start = e->totals();
      EXPECT_EQ(start, host_totals(host));
      EXPECT_NE(start.px2, 0);  // a random state carries momentum, so the check can fail
      for (std::int64_t step = 0; step < 100; ++step) e->advance(step);
      const Totals end = e->totals();
      EXPECT_EQ(end, start) << model_name(model) << " " << kernel_name(kernel);
      EXPECT_NE(to_host(*e, host.size()), host);  // it did evolve
    }
}

TYPED_TEST(FhpKernels, ForcingAddsMomentumAndKeepsMass) {
  using Space = TypeParam;
  const LatticeShape shape{64, 32};
  auto e = make_engine(Space(), Kernel::bits, Model::fhp3, shape, StepParams{3, 3000});
  e->load(to_device<Space>(random_sites(shape, Model::fhp3, 0.0, 2)));
  const Totals start = e->totals();
  for (std::int64_t step = 0; step < 20; ++step) e->advance(step);
  const Totals end = e->totals();
  EXPECT_EQ(end.mass, start.mass);
  EXPECT_GT(end.px2, start.px2 + 200);
  EXPECT_EQ(end.py, start.py);  // forcing moves are mirror pairs in y: no y momentum
}

// The pieces of a run (initial state with solid sites, steps with forcing, totals, field and
// row sums, downloads) on an instance apart from the default one: every hayate::fhp kernel
// must run there.
TYPED_TEST(FhpKernels, RunsOnTheGivenInstance) {
  using Space = TypeParam;
  compat::IndependentInstance<Space> inst;
  const Space& space = inst.space();
  const LatticeShape shape{128, 18};
  std::vector<std::uint8_t> solid_flags(std::size_t(shape.sites()), 0);
  for (std::size_t i = 0; i < solid_flags.size(); i += 37) solid_flags[i] = 1;
  const SiteBytes<Space> solid = to_device<Space>(solid_flags);
  test::KernelLaunchLog log;
  for (const Kernel kernel : {Kernel::bits, Kernel::bytes_wide}) {
    SiteBytes<Space> sites("sites", shape.sites());
    InitialFlow flow;
    flow.ux = 0.1;
    initialize_sites(space, sites, shape, Model::fhp3, flow, solid);
    auto engine = make_engine(space, kernel, Model::fhp3, shape, StepParams{5, 3000});
    engine->load(sites);
    for (std::int64_t step = 0; step < 4; ++step) engine->advance(step);
    const Totals totals = engine->totals();
    engine->store(sites);
    FieldAccumulator<Space> fields(space, shape, 8);
    fields.add(sites);
    const BlockFields f = fields.averages();
    fields.reset();
    const RowSums rows = row_sums(space, sites, shape);
    EXPECT_GT(totals.mass, 0) << kernel_name(kernel);
    EXPECT_EQ(int(rows.mass.size()), shape.ny);
    EXPECT_EQ(int(f.density.size()), f.grid.blocks());
  }
  EXPECT_FALSE(log.hayate_kernels().empty());
  for (const std::string& label : log.elsewhere(compat::tools_device_id(space)))
    ADD_FAILURE() << label << " ran on another instance";
}

}  // namespace
}  // namespace hayate::fhp

// problem: fhp — FHP lattice gas on a hexagonal lattice: FHP-I/II/III collisions, walls and
// obstacles with bounce-back, body forcing, byte or bit-parallel kernel. Writes fields.csv
// (totals), coarse-grained fields as VTK and PNG, and bitwise checkpoints. Every kernel runs on
// the execution-space instance the problem was made with.
#include "fhp/fhp_problem.hpp"

#include "exec/dispatch.hpp"
#include "exec/exec_traits.hpp"
#include "fhp/fhp_fields.hpp"
#include "fhp/fhp_init.hpp"
#include "fhp/fhp_kernels.hpp"
#include "fhp/fhp_obstacles.hpp"
#include "io/csv_writer.hpp"
#include "parallel/comm.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

namespace hayate::fhp {
namespace {

using core::CheckpointReader;
using core::CheckpointWriter;
using core::Config;
using core::RunContext;

// `tuning.kernel`, with auto resolved from the traits of the run's backend.
template <class Space>
Kernel choose_kernel(const Config& config) {
  const std::string k = config.string("tuning.kernel");
  if (k != "auto") return parse_kernel(k);
  return auto_kernel<core::ExecTraits<Space>>(parse_model(config.string("system.model")),
                                              config.integer("system.nx"));
}

// Halo rows on either side of a rank's slab: one is what streaming reads, two keep the stored
// rows in pairs of even and odd global rows, as the kernels step them.
constexpr int halo_rows = 2;

// Each rank steps its slab and the halo rows on either side: a slab holds at least a row pair,
// and with its halo rows it is not taller than the lattice.
bool slabs_fit(int ny, int ranks) {
  return core::row_slab(ny, 2, ranks, ranks - 1).count >= 2 &&
         core::row_slab(ny, 2, ranks, 0).count + 2 * halo_rows <= ny;
}

// Cross-key checks that the schema's ranges cannot express.
void validate(const Config& config) {
  const long long nx = config.integer("system.nx"), ny = config.integer("system.ny");
  if (ny % 2 != 0)
    config.fail("system.ny", "the number of rows must be even (hexagonal rows alternate)");
  // Only a requested bits kernel can meet a row it cannot hold: auto falls back to bytes_wide.
  if (config.string("tuning.kernel") == "bits" && nx % 64 != 0)
    config.fail("system.nx",
                fmt::format("the bits kernel needs a multiple of 64 columns, got {}", nx));
  if (nx % 8 != 0) config.fail("system.nx", fmt::format("nx must be a multiple of 8, got {}", nx));
  const Model model = parse_model(config.string("system.model"));
  if (config.real("system.density") >= channels(model))
    config.fail("system.density", fmt::format("{} holds at most {} particles per site",
                                              model_name(model), channels(model)));
  const int block = int(config.integer("output.block"));
  if (block > nx || BlockGrid(LatticeShape{int(nx), int(ny)}, block).nby < 1)
    config.fail("output.block", "the coarse-graining block is larger than the lattice");
  const long long fields_every = config.integer("output.fields_every");
  const long long window = fields_every > 0 ? fields_every : config.integer("run.steps");
  if (config.integer("output.average") > std::max<long long>(1, window))
    config.fail("output.average",
                "cannot average over more steps than lie between snapshots "
                "(output.fields_every, or run.steps when it is 0)");
  const int ranks = core::Comm::world().size();
  if (ranks > 1 && !slabs_fit(int(ny), ranks)) {
    int enough = 2 * ranks;
    while (!slabs_fit(enough, ranks)) enough += 2;
    config.fail("system.ny", fmt::format("{} rows cannot be split over {} ranks (each takes whole "
                                         "row pairs and {} halo rows): give at least {} rows",
                                         ny, ranks, 2 * halo_rows, enough));
  }
  const auto v = config.reals("init.velocity");
  if (std::hypot(v[0], v[1]) + std::fabs(config.real("init.shear_amplitude")) > 0.5)
    config.fail("init.velocity", "initial speeds above 0.5 are outside the lattice gas' range");
}

// What `hayate check` and `hayate run` check before anything is written: the cross-key
// checks and the obstacles (mask images read).
void check_input(const Config& config, const std::string& /*backend*/) {
  validate(config);
  read_obstacles(config);
}

// Checks a checkpoint against the input before anything is made from it: the lattice size and
// model, the step within run.steps, and every site: solid exactly where the input's walls and
// obstacles are, no rest particle in a model without one; the field and profile sums finite.
void check_checkpoint(const Config& config, const CheckpointReader& cp) {
  const auto nx = cp.get<std::int32_t>("nx", 0, 1 << 30),
             ny = cp.get<std::int32_t>("ny", 0, 1 << 30);
  if (nx != config.integer("system.nx") || ny != config.integer("system.ny"))
    core::checkpoint_mismatch(
        config, nx != config.integer("system.nx") ? "system.nx" : "system.ny", cp,
        fmt::format("holds a {}x{} lattice, the input {}x{}", nx, ny, config.integer("system.nx"),
                    config.integer("system.ny")));
  const Model model = parse_model(config.string("system.model"));
  const auto saved_model = cp.get<std::int32_t>("model", int(Model::fhp1), int(Model::fhp3));
  if (saved_model != int(model))
    core::checkpoint_mismatch(config, "system.model", cp,
                              fmt::format("was written by model number {}, the input asks for {}",
                                          saved_model, model_name(model)));
  const std::int64_t steps = config.integer("run.steps");
  const auto step = cp.get<std::int64_t>("step", 0, std::numeric_limits<std::int64_t>::max());
  if (step > steps)
    core::checkpoint_mismatch(config, "run.steps", cp,
                              fmt::format("is at step {}, beyond run.steps = {}", step, steps));
  const LatticeShape shape{nx, ny};
  const auto solid =
      solid_sites(shape, config.string("system.boundary_x") == "walls",
                  config.string("system.boundary_y") == "walls", read_obstacles(config));
  const auto sites = cp.raw_vector<std::uint8_t>("sites", std::size_t(shape.sites()));
  const bool rest = channels(model) > 6;
  for (std::size_t i = 0; i < sites.size(); ++i) {
    const bool is_solid = (sites[i] >> solid_bit) & 1u;
    // Reported at the checkpoint's key: walls and obstacles are several keys, maybe defaults.
    if (is_solid != (solid[i] != 0))
      cp.fail("sites",
              fmt::format("is {} (column {}, row {}) where the input's walls and 'obstacles' "
                          "make it {}: the checkpoint belongs to another geometry",
                          is_solid ? "solid" : "fluid", i % std::size_t(nx), i / std::size_t(nx),
                          solid[i] ? "solid" : "fluid"),
              i);
    if (!rest && ((sites[i] >> rest_bit) & 1u))
      cp.fail("sites", "holds a rest particle, which " + model_name(model) + " does not have", i);
  }
  if (cp.has("field_sums")) {
    if (cp.size("field_sums") % sizeof(double) != 0)
      cp.fail("field_sums", "does not hold whole reals");
    cp.check_reals<double>("field_sums", cp.size("field_sums") / sizeof(double));
    cp.get<std::int32_t>("field_samples", 0, 1 << 30);
  }
  if (cp.has("profile_sums")) cp.get_vector<double>("profile_sums");
}

template <class Space>
class FhpProblem final : public core::Problem {
 public:
  FhpProblem(const Config& config, const Space& space)
      : config_(config),
        space_(space),
        model_(parse_model(config.string("system.model"))),
        kernel_(choose_kernel<Space>(config)),
        shape_{int(config.integer("system.nx")), int(config.integer("system.ny"))},
        steps_(config.integer("run.steps")),
        every_(config.integer("output.every")),
        fields_every_(config.integer("output.fields_every")),
        average_(std::max<long long>(1, config.integer("output.average"))),
        sample_every_(config.integer("output.sample_every")),
        slab_(core::row_slab(shape_.ny, 2, world_.size(), world_.rank())),
        halo_(world_.distributed() ? halo_rows : 0),
        local_{shape_.nx, slab_.count + 2 * halo_},
        // The whole lattice (initial state, fields, checkpoints) lives on the first rank; with
        // one rank it is also the lattice the engine steps.
        sites_("hayate::fhp::sites", world_.root() ? shape_.sites() : 0),
        local_sites_("hayate::fhp::local_sites", world_.distributed() ? local_.sites() : 0),
        fields_(space, shape_, int(config.integer("output.block"))) {
    // The tables are compile-time constants; check them once more where it is cheap.
    const std::string problem = verify_table(model_, table_of(model_));
    if (!problem.empty()) throw std::logic_error("fhp collision table: " + problem);
    StepParams params;
    params.seed = std::uint64_t(config.integer("system.seed"));
    params.force_q = std::uint32_t(std::lround(config.real("forcing.probability") * forcing_one));
    params.row0 = slab_.first - halo_;
    engine_ = make_engine(space_, kernel_, model_, local_, params);
  }

  void initialize(RunContext& ctx) override {
    auto scope = ctx.timers.scope("initialize");
    world_.on_root([&] { initialize_lattice(); });
    scatter_sites();
    step_ = 0;
    fields_.reset();
    samples_ = 0;
    profile_.assign(3 * std::size_t(shape_.ny), 0.0);
    mass_ = totals().mass;
    open_output(ctx, std::nullopt);
    if (!ctx.quiet)
      spdlog::info("fhp: {} on {}x{} sites, {} kernel, {} particles{}", model_name(model_),
                   shape_.nx, shape_.ny, kernel_name(kernel_), mass_,
                   world_.distributed()
                       ? fmt::format(", {} ranks of up to {} rows", world_.size(), slab_.count)
                       : std::string());
  }

  // The initial state of the whole lattice, in sites_ (the first rank).
  void initialize_lattice() {
    const auto solid_host =
        solid_sites(shape_, config_.string("system.boundary_x") == "walls",
                    config_.string("system.boundary_y") == "walls", read_obstacles(config_));
    SiteBytes<Space> solid(
        Kokkos::view_alloc(std::string("hayate::fhp::solid_init"), Kokkos::WithoutInitializing),
        shape_.sites());
    auto solid_mirror = Kokkos::create_mirror_view(solid);
    for (std::size_t i = 0; i < solid_host.size(); ++i) solid_mirror(i) = solid_host[i];
    Kokkos::deep_copy(space_, solid, solid_mirror);
    InitialFlow flow;
    flow.density = config_.real("system.density");
    const auto v = config_.reals("init.velocity");
    flow.ux = v[0];
    flow.uy = v[1];
    flow.shear = config_.real("init.shear_amplitude");
    flow.seed = std::uint64_t(config_.integer("system.seed"));
    initialize_sites(space_, sites_, shape_, model_, flow, solid);
    space_.fence();  // before the host copy of the solid sites is freed
  }

  void restore(const CheckpointReader& cp, RunContext& ctx) override {
    check_checkpoint(config_, cp);  // sizes, solid sites and states checked before use
    step_ = cp.get<std::int64_t>("step", 0, steps_);
    world_.on_root([&] { cp.get_view("sites", sites_, std::uint8_t(0), std::uint8_t(255)); });
    scatter_sites();
    samples_ = 0;
    if (cp.has("field_sums") && cp.size("field_sums") == fields_.sums().span() * sizeof(double)) {
      cp.get_view("field_sums", fields_.sums());
      samples_ = cp.get<std::int32_t>("field_samples", 0, 1 << 30);
      fields_.set_samples(samples_);
    }
    profile_.assign(3 * std::size_t(shape_.ny), 0.0);
    if (cp.has("profile_sums") && cp.size("profile_sums") == profile_.size() * sizeof(double))
      profile_ = cp.get_vector<double>("profile_sums", profile_.size());
    mass_ = totals().mass;
    open_output(ctx, step_);
  }

  void save(CheckpointWriter& cp) const override {
    cp.put<std::int32_t>("nx", shape_.nx);
    cp.put<std::int32_t>("ny", shape_.ny);
    cp.put<std::int32_t>("model", int(model_));
    cp.put<std::int64_t>("step", step_);
    // Which sites are solid (walls and obstacles) is in the site bytes themselves. Each rank's
    // slab of whole rows is its part: the slabs in rank order are the lattice, whatever the
    // ranks, so a restart may take another number of them.
    const std::size_t nx = std::size_t(shape_.nx);
    if (world_.distributed()) {
      engine_->store(local_sites_);
      const auto local = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), local_sites_);
      cp.put_distributed("sites", local.data() + std::size_t(halo_) * nx, nx,
                         std::size_t(slab_.count));
    } else {
      engine_->store(sites_);
      const auto whole = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sites_);
      cp.put_distributed("sites", whole.data(), nx, std::size_t(shape_.ny));
    }
    cp.put_view("field_sums", fields_.sums());
    cp.put<std::int32_t>("field_samples", fields_.samples());
    cp.put_vector("profile_sums", profile_);
  }

  std::int64_t current_step() const override { return step_; }
  std::int64_t total_steps() const override { return steps_; }

  void advance(RunContext& ctx) override {
    {
      auto scope = ctx.timers.scope("step");
      engine_->advance(step_);
    }
    if (world_.distributed()) {
      auto scope = ctx.timers.scope("halo");
      exchange_halos();
    }
    ++step_;
  }

  void output(RunContext& ctx, bool final) override {
    if (step_ % every_ == 0 || final) {
      auto scope = ctx.timers.scope("totals");
      const Totals t = totals();
      guard(t);
      const double m = double(std::max<std::int64_t>(1, t.mass));
      if (world_.root())
        csv_.row({step_, t.mass, t.momentum_x(), t.momentum_y(), t.momentum_x() / m,
                  t.momentum_y() / m});
    }
    // Snapshots every fields_every steps and at the end; each averages the samples taken in
    // the `average` steps before it.
    const bool snapshot = (fields_every_ > 0 && step_ > 0 && step_ % fields_every_ == 0) || final;
    std::int64_t next = steps_;
    if (fields_every_ > 0)
      next = std::min(steps_, (step_ + fields_every_ - 1) / fields_every_ * fields_every_);
    const bool in_window = step_ > 0 && next - step_ < average_ && step_ % sample_every_ == 0;
    // samples_ counts on every rank, where fields_ only counts on the first: every rank takes
    // the same branches, and each gather has all of them.
    if (in_window || (final && samples_ == 0)) {
      auto scope = ctx.timers.scope("fields");
      gather_sites();
      ++samples_;
      if (world_.root()) {
        fields_.add(sites_);
        const RowSums rows = row_sums(space_, sites_, shape_);
        for (int y = 0; y < shape_.ny; ++y) {
          profile_[3 * y] += rows.mass[y];
          profile_[3 * y + 1] += rows.px2[y];
          profile_[3 * y + 2] += rows.fluid[y];
        }
      }
    }
    if (snapshot && samples_ > 0) {
      auto scope = ctx.timers.scope("write_fields");
      if (world_.root()) write_snapshot(ctx, final);
      fields_.reset();
      samples_ = 0;
      std::fill(profile_.begin(), profile_.end(), 0.0);
    }
  }

  void check_state(RunContext&) override { guard(totals()); }

 private:
  // Collisions, walls, obstacles and the forcing all conserve the particles: a change in their
  // number means the lattice lost some.
  void guard(const Totals& t) const {
    if (t.mass != mass_)
      throw core::CollectiveFailure(
          fmt::format("fhp: the lattice holds {} particles at step {}, not the {} it started with "
                      "(particles lost: the backend computed wrong results)",
                      t.mass, step_, mass_));
  }

  // The lattice's sums: this rank's rows, added over the ranks.
  Totals totals() const {
    Totals t = engine_->totals(halo_, slab_.count);
    std::int64_t v[3] = {t.mass, t.px2, t.py};
    world_.sum(v, 3);
    return Totals{v[0], v[1], v[2]};
  }

  // The stored rows of every rank (its slab and the halo rows around it), from the whole
  // lattice in sites_ on the first rank.
  void scatter_sites() {
    if (!world_.distributed()) {
      engine_->load(sites_);
      space_.fence();
      return;
    }
    constexpr int tag = 7101;
    const std::size_t nx = std::size_t(shape_.nx);
    std::vector<std::uint8_t> mine(std::size_t(local_.sites()));
    if (world_.root()) {
      auto whole = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sites_);
      std::vector<std::uint8_t> part;
      for (int r = world_.size() - 1; r >= 0; --r) {
        const core::RowSlab slab = core::row_slab(shape_.ny, 2, world_.size(), r);
        part.resize(std::size_t(slab.count + 2 * halo_) * nx);
        for (int j = 0; j < slab.count + 2 * halo_; ++j) {
          const int y = (slab.first - halo_ + j + shape_.ny) % shape_.ny;
          std::copy_n(whole.data() + std::size_t(y) * nx, nx, part.data() + std::size_t(j) * nx);
        }
        if (r == 0)
          mine.swap(part);
        else
          world_.send(part.data(), part.size(), r, tag);
      }
    } else {
      world_.recv(mine.data(), mine.size(), 0, tag);
    }
    const Kokkos::View<const std::uint8_t*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> host(
        mine.data(), mine.size());
    Kokkos::deep_copy(space_, local_sites_, host);
    engine_->load(local_sites_);
    space_.fence();  // before `mine` is freed
  }

  // The whole lattice into sites_ on the first rank: the ranks' slabs in rank order are the
  // rows in order.
  void gather_sites() const {
    if (!world_.distributed()) {
      engine_->store(sites_);
      space_.fence();
      return;
    }
    engine_->store(local_sites_);
    auto local = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), local_sites_);
    const std::size_t nx = std::size_t(shape_.nx);
    std::vector<std::size_t> counts;
    for (int r = 0; r < world_.size(); ++r)
      counts.push_back(std::size_t(core::row_slab(shape_.ny, 2, world_.size(), r).count) * nx);
    std::vector<std::uint8_t> whole(world_.root() ? std::size_t(shape_.sites()) : 0);
    world_.gather(local.data() + std::size_t(halo_) * nx, std::size_t(slab_.count) * nx,
                  whole.data(), counts);
    if (world_.root()) {
      const Kokkos::View<const std::uint8_t*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> host(
          whole.data(), whole.size());
      Kokkos::deep_copy(space_, sites_, host);
      space_.fence();
    }
  }

  // After every step: the two rows at each edge of the slab to the neighbour across it (the
  // lattice is periodic in y; walls are solid rows), its edge rows into the halo rows.
  void exchange_halos() {
    const int n = slab_.count, r = world_.rank(), R = world_.size();
    const int above = (r + 1) % R, below = (r + R - 1) % R;
    const std::size_t words = engine_->row_words() * std::size_t(halo_);
    send_.resize(words);
    recv_.resize(words);
    engine_->get_rows(halo_, halo_, send_.data());  // first rows down, halo rows above up
    world_.exchange(send_.data(), words * 8, below, recv_.data(), words * 8, above, 7102);
    engine_->put_rows(halo_ + n, halo_, recv_.data());
    engine_->get_rows(n, halo_, send_.data());  // last rows up, halo rows below down
    world_.exchange(send_.data(), words * 8, above, recv_.data(), words * 8, below, 7103);
    engine_->put_rows(0, halo_, recv_.data());
  }

  // A fresh fields.csv, or (resume_after: the checkpoint's step) the folder's one continued.
  // Only the first rank writes.
  void open_output(RunContext& ctx, std::optional<std::int64_t> resume_after) {
    if (!world_.root()) return;
    csv_ = core::CsvWriter(ctx.outputs, ctx.path("fields.csv"),
                           {"step", "mass", "momentum_x", "momentum_y", "mean_ux", "mean_uy"},
                           resume_after);
  }

  void write_snapshot(RunContext& ctx, bool final) {
    const BlockFields f = fields_.averages();
    const std::string stem =
        final ? std::string("fields_final") : fmt::format("fields_{:08d}", step_);
    if (config_.boolean("output.vtk")) write_fields_vtk(ctx.path(stem + ".vtk"), f, step_);
    if (config_.boolean("output.png"))
      write_fields_png(ctx.path(stem + ".png"), f, int(config_.integer("output.pixels")),
                       int(config_.integer("output.arrows")), config_.real("output.speed_max"));
    if (config_.boolean("output.profile")) {
      // Row averages over all columns: the velocity profile across a channel.
      std::vector<std::vector<core::CsvValue>> rows;
      const double samples = double(fields_.samples()), nx = double(shape_.nx);
      for (int y = 0; y < shape_.ny; ++y) {
        const double m = profile_[3 * y], px2 = profile_[3 * y + 1], fluid = profile_[3 * y + 2];
        rows.push_back({std::int64_t(y), y * sqrt3_2, fluid > 0 ? m / fluid : 0.0,
                        m > 0 ? 0.5 * px2 / m : 0.0, fluid / (samples * nx)});
      }
      core::write_csv_file(ctx.path(stem + "_profile.csv"),
                           {"row", "y", "density", "ux", "fluid_fraction"}, rows);
    }
  }

  const Config& config_;
  const core::Comm& world_ = core::Comm::world();
  Space space_;
  Model model_;
  Kernel kernel_;
  LatticeShape shape_;
  std::int64_t steps_, every_, fields_every_, average_, sample_every_;
  core::RowSlab slab_;  // this rank's rows of the lattice
  int halo_;            // halo rows on either side (0 on one rank)
  LatticeShape local_;  // the rows the engine stores: the slab and its halo rows
  SiteBytes<Space> sites_;
  SiteBytes<Space> local_sites_;
  FieldAccumulator<Space> fields_;
  std::vector<double> profile_;  // per row: particles, x momentum (half units), fluid sites
  std::unique_ptr<Engine<Space>> engine_;
  std::int64_t step_ = 0;
  std::int64_t mass_ = 0;     // particles on the lattice: conserved
  std::int32_t samples_ = 0;  // field samples since the last snapshot
  std::vector<std::uint64_t> send_, recv_;
  core::CsvWriter csv_;
};

void declare(core::Schema& s) {
  s.section("system", "The lattice and the gas");
  s.choice("system.model", {"fhp1", "fhp2", "fhp3"},
           "Collision rules: fhp1 (6 channels, 5 changing states), fhp2 (rest particle, 22), "
           "fhp3 (collision-saturated, 76)")
      .defaults("fhp3");
  s.integer("system.nx", "Columns; a multiple of 8 (byte kernels) or 64 (bits kernel)")
      .defaults(256)
      .range(8, 1LL << 20);
  s.integer("system.ny", "Rows (even); odd rows are shifted half a spacing to the right")
      .defaults(128)
      .range(2, 1LL << 20);
  s.real("system.density", "Mean particles per site rho (reduced density d = rho / channels)")
      .defaults(2.1)
      .above(0)
      .below(7);
  s.integer("system.seed", "Seed of every random draw (initial state, chirality, forcing)")
      .defaults(1)
      .at_least(0);
  s.choice("system.boundary_x", {"periodic", "walls"},
           "periodic, or no-slip walls (bounce-back) in the first and last column")
      .defaults("periodic");
  s.choice("system.boundary_y", {"periodic", "walls"},
           "periodic, or no-slip walls (bounce-back) in the first and last row")
      .defaults("periodic");
  s.section("run", "Time stepping");
  s.integer("run.steps", "Time steps (each: stream and collide every site)")
      .defaults(1000)
      .at_least(0);
  s.section("init", "Initial state: random occupation around a local equilibrium");
  s.reals("init.velocity", "Mean velocity [ux, uy] in lattice units")
      .defaults("[0.0, 0.0]")
      .items(2, 2);
  s.real("init.shear_amplitude",
         "Adds ux = A sin(2 pi y / ny): a shear wave (viscosity measurement)")
      .defaults(0.0)
      .range(-0.5, 0.5);
  s.section("forcing", "Body force");
  s.real("forcing.probability",
         "Per site and step: probability of turning -x movers into +x movers where the slot is "
         "free (mass-conserving momentum injection); quantized to 1/65536")
      .defaults(0.0)
      .range(0, 1);
  s.records(
       "obstacles", "Solid obstacles (bounce-back); coordinates in columns and rows",
       [](core::Section& r) {
         r.choice("type", {"rectangle", "plate", "circle", "mask"}, "Obstacle shape");
         r.real("x", "rectangle/mask: first column; plate/circle: centre column").optional_key();
         r.real("y", "rectangle/mask: first row; plate/circle: centre row").optional_key();
         r.real("width", "rectangle: columns").optional_key();
         r.real("height", "rectangle: rows").optional_key();
         r.real("length", "plate: length across the flow, in lattice spacings").optional_key();
         r.real("thickness", "plate: thickness along x, in lattice spacings (default 1)")
             .optional_key();
         r.real("radius", "circle: radius in lattice spacings").optional_key();
         r.string("file",
                  "mask: PGM (P2, P5) or 8-bit PNG image, one pixel per site, relative to the "
                  "input file")
             .optional_key();
         r.real("threshold", "mask: pixels darker than this fraction of white are solid")
             .defaults(0.5)
             .range(0, 1);
       })
      .defaults("[]");
  s.integer("output.every", "Write a fields.csv row every this many steps")
      .defaults(10)
      .at_least(1);
  s.integer("output.fields_every",
            "Write coarse-grained fields (VTK, PNG) every this many steps; 0 = only at the end")
      .defaults(0)
      .at_least(0);
  s.integer("output.average",
            "Average the fields over the last this many steps before each snapshot")
      .defaults(1)
      .at_least(1);
  s.integer("output.sample_every",
            "Within the averaging window, sample the fields every this many steps")
      .defaults(10)
      .at_least(1);
  s.integer("output.block", "Coarse-graining block: columns per block (rows scaled to be square)")
      .defaults(8)
      .range(1, 4096);
  s.boolean("output.vtk", "Write fields_*.vtk (legacy VTK structured points)").defaults(true);
  s.boolean("output.png", "Write fields_*.png (speed colour map with velocity arrows)")
      .defaults(true);
  s.boolean("output.profile",
            "Write fields_*_profile.csv: row averages of density and u_x (channel profiles)")
      .defaults(true);
  s.integer("output.pixels", "PNG pixels per block").defaults(4).range(1, 64);
  s.integer("output.arrows", "PNG: one arrow every this many blocks; 0 = none")
      .defaults(4)
      .at_least(0);
  s.real("output.speed_max",
         "PNG: speed at the top of the colour map; 0 = the largest in the picture")
      .defaults(0.0)
      .at_least(0);
  s.section("tuning", "Performance switches; results do not depend on them");
  s.choice("tuning.kernel", {"auto", "bytes_wide", "bytes_sliced", "bits"},
           "bytes_wide: one byte per site, 64 sites per thread, table lookup; bytes_sliced: one "
           "byte per site, 64 sites per thread bit-sliced in registers, boolean logic; bits: 64 "
           "sites per word, boolean logic (nx a multiple of 64). auto: bits when nx is a "
           "multiple of 64 and the backend is a GPU or the model is fhp1, else bytes_wide. All "
           "give identical results")
      .defaults("auto");
  s.moved("run.kernel", "tuning.kernel");
}

}  // namespace

void register_problem(core::Registry& registry) {
  core::declare_distributed("fhp");
  registry.add(core::ProblemInfo{
      "fhp",
      "FHP lattice gas (FHP-I/II/III) on a hexagonal lattice: obstacles, forcing, flow fields",
      declare,
      [](const Config& config, const std::string& backend) {
        validate(config);
        return core::dispatch_backend(backend, [&](auto space) -> std::unique_ptr<core::Problem> {
          using Space = decltype(space);
          return std::make_unique<FhpProblem<Space>>(config, space);
        });
      },
      check_input, check_checkpoint});
}

}  // namespace hayate::fhp

// problem: gravity — the input schema and the registration; the problem itself is
// GravityProblem (problem.hpp).
#include "gravity/gravity_problem.hpp"

#include "exec/dispatch.hpp"
#include "gravity/problem.hpp"

#include <memory>
#include <string>

namespace hayate::gravity {
namespace {

void declare(core::Schema& s) {
  s.section("system", "Particles and physical constants");
  s.integer("system.n",
            "Number of particles of a generated initial condition (kepler: 2; file: "
            "from the file)")
      .defaults(1024)
      .range(2, 1LL << 27);
  s.real("system.G", "Gravitational constant").defaults(1.0).above(0);
  s.real("system.softening", "Plummer softening length eps (force m r / (r^2 + eps^2)^1.5)")
      .defaults(0.01)
      .above(0);
  s.integer("system.seed", "Seed of the initial-condition random numbers").defaults(1).at_least(0);
  s.choice("solver", {"direct", "tree"},
           "Force solver: direct O(N^2) summation or the Barnes-Hut octree")
      .defaults("direct");
  s.choice("precision", {"float", "double", "mixed"},
           "Force arithmetic: float, double, or mixed (float pair terms summed in double)")
      .defaults("mixed");
  s.section("tree", "Barnes-Hut tree (solver: tree)");
  s.choice("tree.mac", {"acceleration", "theta"},
           "Opening criterion: acceleration (G m/d^2 (b/d)^2 <= dacc |a_old|) or theta "
           "(cell side / d < theta)")
      .defaults("acceleration");
  s.real("tree.dacc", "Acceleration-MAC tolerance (2^-9 = 0.001953125)")
      .defaults(0.001953125)
      .above(0)
      .at_most(1);
  s.real("tree.theta", "Opening angle of the theta MAC, and of the first step")
      .defaults(0.5)
      .above(0)
      .at_most(2);
  s.choice("tree.first_step", {"theta", "direct"},
           "Forces of the first step, before accelerations exist for the acceleration MAC")
      .defaults("theta");
  s.integer("tree.leaf_size", "Most particles in a leaf").defaults(32).range(1, 1024);
  s.integer("tree.rebuild_every",
            "Rebuild the tree every this many force evaluations; 0 = automatic (when the "
            "next walk would cost more than the average step since the last rebuild; not "
            "reproducible run to run)")
      .defaults(0)
      .at_least(0);
  s.boolean("tree.quadrupole", "Use node quadrupole moments (else monopoles only)").defaults(true);
  s.section("time", "Time integration");
  s.choice("time.integrator", {"leapfrog", "block", "hermite"},
           "leapfrog: KDK with the shared step dt; block: KDK with power-of-two individual steps "
           "<= dt; hermite: 4th-order Hermite with the shared step dt (direct solver only)")
      .defaults("leapfrog");
  s.real("time.dt", "Shared step (leapfrog, hermite) or largest block step (block)")
      .defaults(0.0078125)
      .above(0);
  s.real("time.eta", "Block-step accuracy: dt_i <= eta sqrt(eps / |a_i|)").defaults(0.025).above(0);
  s.integer("time.max_level", "Deepest block level: the smallest step is dt / 2^max_level")
      .defaults(10)
      .range(0, 30);
  s.section("run", "Run length");
  s.integer("run.steps", "Steps to take (block: dt cycles)").defaults(100).at_least(1);
  s.section("initial", "Initial conditions");
  s.choice("initial.type", {"plummer", "hernquist", "cold_sphere", "kepler", "galaxy", "file"},
           "Initial condition model, or particles read from initial.file")
      .defaults("plummer");
  s.real("initial.mass", "Total mass").defaults(1.0).above(0);
  s.real("initial.radius", "plummer: virial radius; hernquist: scale length a; cold_sphere: radius")
      .defaults(1.0)
      .above(0);
  s.real("initial.truncation", "hernquist: truncation radius in scale lengths")
      .defaults(50.0)
      .above(1);
  s.section("initial.kepler", "Two-body orbit");
  s.real("initial.kepler.semi_major_axis", "Semi-major axis").defaults(1.0).above(0);
  s.real("initial.kepler.eccentricity", "Eccentricity (starts at apocentre)")
      .defaults(0.5)
      .at_least(0)
      .below(1);
  s.real("initial.kepler.mass_ratio", "m2 / m1").defaults(1.0).above(0);
  s.section("initial.galaxy", "Hernquist bulge + exponential disk + dark halo");
  s.real("initial.galaxy.bulge_mass", "Bulge mass").defaults(0.05).at_least(0);
  s.real("initial.galaxy.bulge_scale", "Bulge Hernquist scale length").defaults(0.2).above(0);
  s.real("initial.galaxy.disk_mass", "Disk mass").defaults(0.1).at_least(0);
  s.real("initial.galaxy.disk_scale", "Disk exponential scale length R_d").defaults(1.0).above(0);
  s.real("initial.galaxy.disk_height", "Disk sech^2 scale height z0").defaults(0.1).above(0);
  s.real("initial.galaxy.disk_sigma_ratio", "Disk sigma_R / sigma_z").defaults(1.5).above(0);
  s.real("initial.galaxy.halo_mass", "Halo mass within its truncation radius")
      .defaults(1.0)
      .at_least(0);
  s.real("initial.galaxy.halo_scale", "Halo scale length (Hernquist a, NFW r_s)")
      .defaults(3.0)
      .above(0);
  s.real("initial.galaxy.halo_truncation",
         "Halo truncation radius in scale lengths (the concentration for NFW)")
      .defaults(10.0)
      .above(1);
  s.choice("initial.galaxy.halo_profile", {"hernquist", "nfw"}, "Halo density profile")
      .defaults("hernquist");
  s.string("initial.file", "Particle file for initial.type: file").defaults("\"\"");
  s.choice("initial.format", {"auto", "xyz", "csv"},
           "Format of initial.file; auto = by extension (.csv, else extended XYZ, last frame)")
      .defaults("auto");
  s.integer("output.every", "Write a thermo.csv row every this many steps")
      .defaults(10)
      .at_least(1);
  s.integer("output.snapshot_every",
            "Append a snapshots.xyz frame every this many steps (0 = only the final state)")
      .defaults(0)
      .at_least(0);
  s.integer("output.force_error_every",
            "Write force_error.csv (solver vs double direct summation on a sample) every this "
            "many steps and at the end; 0 = never")
      .defaults(0)
      .at_least(0);
  s.integer("output.force_error_sample", "Particles in the force-error sample")
      .defaults(1024)
      .range(1, 1 << 20);
  s.section("tuning", "Performance switches; auto = the backend's choice");
  s.choice("tuning.i_per_thread", {"auto", "1", "2", "4", "8"},
           "Targets each thread of the direct-summation kernel (leapfrog, block steps) keeps in "
           "registers; each staged source is reused that many times, at the cost of fewer "
           "threads. auto: GPUs 1 below 65,536 targets and 4 above, CPUs 8. The Hermite kernel "
           "keeps the backend's compiled count (GPUs 1, CPUs 8)")
      .defaults("auto");

  // Keys of earlier versions.
  s.moved("direct.i_per_thread", "tuning.i_per_thread");
  s.removed("direct.team_size", "the backend's team size is used (no size measured better)");
  s.removed("direct.tile", "tiles are 256 sources (no other size measured better)");
  s.removed("direct.j_split", "the j-split is chosen to fill the device");
  s.removed("tree.group_cell", "target groups are cut in cells of more than 64 groups' worth");
  s.removed("tree.reorder", "the particles are always kept in the tree's order");
  s.removed("tree.walk", "the group walk is always used");
  s.removed("tree.group_order", "the group walk always launches its dearest groups first");
  s.removed("tree.sort", "the backend's fastest stable sort is used");
  s.removed("tree.kernel", "the backend's fastest walk primitives are used");
  s.removed("tree.curve", "keys follow the Peano-Hilbert curve");
}

// Cross-key checks the schema cannot express.
void check_keys(const core::Config& config) {
  if (config.string("initial.type") == "galaxy") {
    const double total = config.real("initial.galaxy.bulge_mass") +
                         config.real("initial.galaxy.disk_mass") +
                         config.real("initial.galaxy.halo_mass");
    if (!(total > 0))
      config.fail("initial.galaxy.halo_mass", "the galaxy needs a positive total mass");
  }
  if (config.string("time.integrator") == "hermite" && config.string("solver") != "direct")
    config.fail("solver", "the Hermite integrator needs the direct solver (jerks)");
  if (core::Comm::world().distributed() && config.string("solver") != "direct")
    config.fail("solver", fmt::format("the tree runs on one rank; on {} ranks use solver: direct",
                                      core::Comm::world().size()));
}

// What `hayate check` and `hayate run` check before anything is written: the cross-key checks
// and a particle file, read and checked (generated models are made by the run itself).
void check(const core::Config& config, const std::string& /*backend*/) {
  check_keys(config);
  if (config.string("initial.type") == "file") make_initial_conditions(config);
}

}  // namespace

void register_problem(core::Registry& registry) {
  core::declare_distributed("gravity");  // direct summation: targets split over the ranks
  core::ProblemInfo info{
      "gravity",
      "Gravitational N-body: direct summation or Barnes-Hut tree, leapfrog/block/Hermite", declare,
      [](const core::Config& config, const std::string& backend) {
        check_keys(config);
        return core::dispatch_backend(backend, [&](auto space) -> std::unique_ptr<core::Problem> {
          return std::make_unique<GravityProblem<decltype(space)>>(config, space);
        });
      }};
  info.check = check;
  info.check_restart = check_checkpoint;
  registry.add(std::move(info));
}

}  // namespace hayate::gravity

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
  s.section("direct", "Launch shape of the direct-summation kernel (0 = the backend's default)");
  s.integer("direct.team_size", "Threads per team; 0 = 256 on GPUs, 1 on CPUs")
      .defaults(0)
      .range(0, 1024);
  s.integer("direct.tile", "Source particles staged per scratch tile; 0 = 256")
      .defaults(0)
      .range(0, 4096);
  s.integer("direct.j_split",
            "Teams sharing one block of targets (source range split); 0 = automatic, enough "
            "to fill the device")
      .defaults(0)
      .at_least(0);
  s.integer("direct.i_per_thread",
            "Targets per thread (1, 2, 4 or 8) of the leapfrog/block force kernel; 0 = automatic "
            "(GPUs: 1 below 65536 targets, else 4; CPUs: 8)")
      .defaults(0)
      .range(0, 8);
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
  s.integer("tree.group_cell",
            "Target groups are cut where they cross a boundary inside a cell of more than this "
            "many groups' worth of particles; 0 = never (fixed runs of sorted particles)")
      .defaults(64)
      .range(0, 1 << 20);
  s.integer("tree.rebuild_every",
            "Rebuild the tree every this many force evaluations; 0 = automatic (when the "
            "next walk would cost more than the average step since the last rebuild; not "
            "reproducible run to run)")
      .defaults(0)
      .at_least(0);
  s.boolean("tree.quadrupole", "Use node quadrupole moments (else monopoles only)").defaults(true);
  s.boolean("tree.reorder",
            "Keep the particles in the tree's order (permuted at each rebuild), so the "
            "evaluations read and write them in order; snapshots and force-error samples go by "
            "the initial conditions' order either way")
      .defaults(true);
  s.choice("tree.walk", {"group", "particle"},
           "Walk: group (a team walks once per group, lanes test nodes in parallel and sum "
           "interaction lists from scratch) or particle (each thread walks node after node)")
      .defaults("group");
  s.choice("tree.curve", {"hilbert", "morton"},
           "Space-filling curve of the keys that order the particles: Peano-Hilbert (compact "
           "target groups) or Morton")
      .defaults("hilbert");
  s.choice("tree.group_order", {"cost", "tree"},
           "Order in which the group walk launches its groups: cost (dearest first, by the "
           "entries of each group's last walk, tree order within a power-of-two class) or tree")
      .defaults("cost");
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

  // Keys of earlier versions.
  s.removed("tree.sort", "the backend's fastest stable sort is used");
  s.removed("tree.kernel", "the backend's fastest walk primitives are used");
}

}  // namespace

void register_problem(core::Registry& registry) {
  registry.add(core::ProblemInfo{
      "gravity",
      "Gravitational N-body: direct summation or Barnes-Hut tree, leapfrog/block/Hermite", declare,
      [](const core::Config& config, const std::string& backend) {
        if (config.string("initial.type") == "galaxy") {
          const double total = config.real("initial.galaxy.bulge_mass") +
                               config.real("initial.galaxy.disk_mass") +
                               config.real("initial.galaxy.halo_mass");
          if (!(total > 0))
            config.fail("initial.galaxy.halo_mass", "the galaxy needs a positive total mass");
        }
        if (config.string("time.integrator") == "hermite" && config.string("solver") != "direct")
          config.fail("solver", "the Hermite integrator needs the direct solver (jerks)");
        return core::dispatch_backend(backend, [&](auto space) -> std::unique_ptr<core::Problem> {
          return std::make_unique<GravityProblem<decltype(space)>>(config, space);
        });
      }});
}

}  // namespace hayate::gravity

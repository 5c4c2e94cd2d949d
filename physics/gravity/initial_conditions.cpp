#include "gravity/initial_conditions.hpp"

#include "config/error.hpp"
#include "io/input_file.hpp"
#include "io/xyz.hpp"
#include "util/random.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

namespace hayate::gravity {
namespace {

constexpr double pi = 3.14159265358979323846;

// Sequential draws of one particle's stream.
struct Draws {
  std::uint64_t seed, stream, counter = 0;
  double uniform() { return util::uniform01(seed, stream, counter++); }
  double normal() {
    const double u1 = 1.0 - uniform();
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * pi * u2);
  }
  // A uniformly random direction times `length`.
  void direction(double length, double* out) {
    const double z = 2.0 * uniform() - 1.0;
    const double phi = 2.0 * pi * uniform();
    const double s = std::sqrt(std::max(0.0, 1.0 - z * z));
    out[0] = length * s * std::cos(phi);
    out[1] = length * s * std::sin(phi);
    out[2] = length * z;
  }
};

// A truncated spherical profile: enclosed mass and density, normalised to `mass` within rmax.
struct Spheroid {
  enum Kind { Hernquist, Nfw } kind;
  double mass, scale, rmax;

  double shape_mass(double r) const {  // unnormalised M(r)
    const double x = r / scale;
    if (kind == Hernquist) return x * x / ((1 + x) * (1 + x));
    return std::log1p(x) - x / (1 + x);
  }
  double shape_density(double r) const {  // matching unnormalised rho(r) (d shape_mass / dV)
    const double x = r / scale;
    const double s3 = 4 * pi * scale * scale * scale;
    if (kind == Hernquist) return 2.0 / (s3 * x * (1 + x) * (1 + x) * (1 + x));
    return 1.0 / (s3 * x * (1 + x) * (1 + x));
  }
  double enclosed(double r) const {
    return mass * shape_mass(std::min(r, rmax)) / shape_mass(rmax);
  }
  double density(double r) const {
    return r > rmax ? 0.0 : mass * shape_density(r) / shape_mass(rmax);
  }
  // Radius enclosing the fraction u of the mass: analytic for Hernquist (M ~ x^2 / (1 + x)^2),
  // bisection in log r for NFW.
  double radius_of(double u) const {
    const double target = u * shape_mass(rmax);
    if (kind == Hernquist) {
      const double s = std::sqrt(target);
      return scale * s / (1.0 - s);
    }
    double lo = std::log(scale * 1e-7), hi = std::log(rmax);
    for (int it = 0; it < 80; ++it) {
      const double mid = 0.5 * (lo + hi);
      (shape_mass(std::exp(mid)) < target ? lo : hi) = mid;
    }
    return std::exp(0.5 * (lo + hi));
  }
};

// Isotropic Jeans dispersion sigma^2(r) = 1/rho int_r^rmax rho G M_tot / r'^2 dr' of a tracer,
// tabulated on a log grid and interpolated.
class JeansTable {
 public:
  JeansTable(const Spheroid& tracer, const std::function<double(double)>& total_mass, double G) {
    const int k = 1024;
    lr0_ = std::log(tracer.scale * 1e-5);
    dlr_ = (std::log(tracer.rmax) - lr0_) / (k - 1);
    sigma2_.assign(k, 0.0);
    double integral = 0;
    auto integrand = [&](double r) { return tracer.density(r) * G * total_mass(r) / (r * r) * r; };
    for (int i = k - 2; i >= 0; --i) {
      const double r0 = std::exp(lr0_ + i * dlr_), r1 = std::exp(lr0_ + (i + 1) * dlr_);
      integral += 0.5 * dlr_ * (integrand(r0) + integrand(r1));
      sigma2_[i] = integral / tracer.density(r0);
    }
  }
  double sigma2(double r) const {
    const double t = (std::log(r) - lr0_) / dlr_;
    if (t <= 0) return sigma2_.front();
    const int i = int(t);
    if (i >= int(sigma2_.size()) - 1) return sigma2_.back();
    return sigma2_[i] + (t - i) * (sigma2_[i + 1] - sigma2_[i]);
  }

 private:
  double lr0_ = 0, dlr_ = 1;
  std::vector<double> sigma2_;
};

// Samples `count` particles of a spheroid into p starting at `first`.
void sample_spheroid(HostParticles& p, int first, int count, double particle_mass,
                     const Spheroid& s, const JeansTable& jeans, std::uint64_t seed) {
  for (int i = first; i < first + count; ++i) {
    Draws d{seed, std::uint64_t(i)};
    const double r = s.radius_of(d.uniform());
    d.direction(r, &p.x[3 * i]);
    const double sigma = std::sqrt(std::max(0.0, jeans.sigma2(r)));
    for (int c = 0; c < 3; ++c) p.v[3 * i + c] = sigma * d.normal();
    p.m[i] = particle_mass;
  }
}

double require_number(const std::string& token, const std::string& path, int line, int col,
                      const std::string& what) {
  char* end = nullptr;
  const double v = std::strtod(token.c_str(), &end);
  if (token.empty() || end != token.c_str() + token.size() || !std::isfinite(v))
    throw core::InputError(core::SourceLocation{path, line, col},
                           "expected a number for " + what + ", got '" + token + "'");
  return v;
}

HostParticles read_csv(const std::string& path) {
  core::check_input_file(path, "particle file", core::max_data_file_bytes);
  std::ifstream in(path);
  if (!in)
    throw core::InputError(core::SourceLocation{path, 0, 0}, "cannot open the particle file");
  std::string line;
  int line_no = 0;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) {
      cell.erase(0, cell.find_first_not_of(" \t"));
      cell.erase(cell.find_last_not_of(" \t") + 1);
      header.push_back(cell);
    }
    break;
  }
  const std::vector<std::string> wanted{"x", "y", "z", "vx", "vy", "vz", "m"};
  std::vector<int> column(wanted.size(), -1);
  for (std::size_t w = 0; w < wanted.size(); ++w)
    for (std::size_t h = 0; h < header.size(); ++h)
      if (header[h] == wanted[w] || (wanted[w] == "m" && header[h] == "mass")) column[w] = int(h);
  for (std::size_t w = 0; w < wanted.size(); ++w)
    if (column[w] < 0)
      throw core::InputError(
          core::SourceLocation{path, std::max(line_no, 1), 1},
          "the CSV header must name the columns x,y,z,vx,vy,vz,m; '" + wanted[w] + "' is missing");
  HostParticles p;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos || line[0] == '#') continue;
    std::vector<std::pair<std::string, int>> cells;
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = line.find(',', start);
      std::string cell =
          line.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      const std::size_t lead = cell.find_first_not_of(" \t");
      const int col = int(start + (lead == std::string::npos ? 0 : lead)) + 1;
      cell.erase(0, lead == std::string::npos ? cell.size() : lead);
      cell.erase(cell.find_last_not_of(" \t") + 1);
      cells.emplace_back(cell, col);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (cells.size() != header.size())
      throw core::InputError(
          core::SourceLocation{path, line_no, 1},
          fmt::format("expected {} values, found {}", header.size(), cells.size()));
    double val[7];
    for (int w = 0; w < 7; ++w) {
      const auto& [token, col] = cells[column[w]];
      val[w] = require_number(token, path, line_no, col, "'" + wanted[w] + "'");
    }
    if (!(val[6] > 0))
      throw core::InputError(core::SourceLocation{path, line_no, cells[column[6]].second},
                             "masses must be positive");
    for (int c = 0; c < 3; ++c) {
      p.x.push_back(val[c]);
      p.v.push_back(val[3 + c]);
    }
    p.m.push_back(val[6]);
  }
  return p;
}

HostParticles read_xyz_particles(const std::string& path) {
  const core::XyzFrame frame = core::read_xyz(path, -1);
  const core::XyzColumn* pos = frame.column("pos");
  const core::XyzColumn* vel = frame.column("velo") ? frame.column("velo") : frame.column("vel");
  const core::XyzColumn* mass =
      frame.column("mass") ? frame.column("mass") : frame.column("masses");
  if (!pos || pos->components != 3 || !vel || vel->components != 3 || !mass ||
      mass->components != 1)
    throw core::InputError(core::SourceLocation{path, 2, 1},
                           "the extended XYZ frame needs the properties pos:R:3, velo:R:3 (or "
                           "vel) and mass:R:1 (or masses)");
  HostParticles p;
  p.x = pos->values;
  p.v = vel->values;
  p.m = mass->values;
  for (std::size_t i = 0; i < p.m.size(); ++i)
    if (!(p.m[i] > 0))
      throw core::InputError(core::SourceLocation{path, 0, 0},
                             fmt::format("particle {} has a non-positive mass", i));
  return p;
}

}  // namespace

void centre(HostParticles& p) {
  double mt = 0, cx[3] = {0, 0, 0}, cv[3] = {0, 0, 0};
  for (int i = 0; i < p.size(); ++i) {
    mt += p.m[i];
    for (int c = 0; c < 3; ++c) {
      cx[c] += p.m[i] * p.x[3 * i + c];
      cv[c] += p.m[i] * p.v[3 * i + c];
    }
  }
  for (int i = 0; i < p.size(); ++i)
    for (int c = 0; c < 3; ++c) {
      p.x[3 * i + c] -= cx[c] / mt;
      p.v[3 * i + c] -= cv[c] / mt;
    }
}

HostParticles plummer(int n, double mass, double radius, double G, std::uint64_t seed) {
  HostParticles p;
  p.resize(n);
  // Plummer units (G = M = a = 1) to N-body units: a = 3 pi / 16 for E = -1/4.
  const double a = 3.0 * pi / 16.0;
  const double vscale = std::sqrt(G * mass / radius) / std::sqrt(a);
  for (int i = 0; i < n; ++i) {
    Draws d{seed, std::uint64_t(i)};
    double r;
    do {
      r = 1.0 / std::sqrt(std::pow(d.uniform(), -2.0 / 3.0) - 1.0);
    } while (!(r <= 10.0));
    d.direction(r * a * radius, &p.x[3 * i]);
    double q, y;
    do {  // von Neumann rejection for g(q) = q^2 (1 - q^2)^(7/2), max < 0.1
      q = d.uniform();
      y = 0.1 * d.uniform();
    } while (y > q * q * std::pow(1.0 - q * q, 3.5));
    const double speed = q * std::sqrt(2.0) * std::pow(1.0 + r * r, -0.25);
    d.direction(speed * vscale, &p.v[3 * i]);
    p.m[i] = mass / n;
  }
  centre(p);
  return p;
}

HostParticles hernquist(int n, double mass, double a, double truncation, double G,
                        std::uint64_t seed) {
  HostParticles p;
  p.resize(n);
  const Spheroid s{Spheroid::Hernquist, mass, a, truncation * a};
  const JeansTable jeans(
      s, [&](double r) { return s.enclosed(r); }, G);
  sample_spheroid(p, 0, n, mass / n, s, jeans, seed);
  centre(p);
  return p;
}

HostParticles cold_sphere(int n, double mass, double radius, std::uint64_t seed) {
  HostParticles p;
  p.resize(n);
  for (int i = 0; i < n; ++i) {
    Draws d{seed, std::uint64_t(i)};
    d.direction(radius * std::cbrt(d.uniform()), &p.x[3 * i]);
    p.m[i] = mass / n;
  }
  centre(p);
  return p;
}

HostParticles kepler(double mass, double mass_ratio, double a, double e, double G) {
  HostParticles p;
  p.resize(2);
  const double m1 = mass / (1.0 + mass_ratio), m2 = mass - m1;
  const double r = a * (1.0 + e);
  const double v = std::sqrt(G * mass * (1.0 - e) / (a * (1.0 + e)));  // relative, at apocentre
  p.m = {m1, m2};
  p.x[0] = -r * m2 / mass;
  p.x[3] = r * m1 / mass;
  p.v[1] = -v * m2 / mass;
  p.v[4] = v * m1 / mass;
  return p;
}

HostParticles galaxy(int n, const GalaxyParams& g, double G, std::uint64_t seed) {
  const double total = g.bulge_mass + g.disk_mass + g.halo_mass;
  const int nb = int(std::llround(n * g.bulge_mass / total));
  const int nd = int(std::llround(n * g.disk_mass / total));
  const int nh = n - nb - nd;
  const double mp = total / n;
  const Spheroid bulge{Spheroid::Hernquist, g.bulge_mass, g.bulge_scale, 50.0 * g.bulge_scale};
  const Spheroid halo{g.halo_nfw ? Spheroid::Nfw : Spheroid::Hernquist, g.halo_mass, g.halo_scale,
                      g.halo_truncation * g.halo_scale};
  const double rd = g.disk_scale, disk_cut = 10.0;
  const double disk_norm = 1.0 - (1.0 + disk_cut) * std::exp(-disk_cut);
  auto disk_enclosed = [&](double r) {  // spherical approximation of the disk's mass
    const double x = std::min(r / rd, disk_cut);
    return g.disk_mass * (1.0 - (1.0 + x) * std::exp(-x)) / disk_norm;
  };
  auto total_mass = [&](double r) {
    return bulge.enclosed(r) + halo.enclosed(r) + disk_enclosed(r);
  };

  HostParticles p;
  p.resize(n);
  if (nb > 0) sample_spheroid(p, 0, nb, mp, bulge, JeansTable(bulge, total_mass, G), seed);
  if (nh > 0) sample_spheroid(p, nb + nd, nh, mp, halo, JeansTable(halo, total_mass, G), seed);
  for (int i = nb; i < nb + nd; ++i) {
    Draws d{seed, std::uint64_t(i)};
    double R;
    do {  // Sigma ~ exp(-R/Rd): R/Rd is Gamma(2)-distributed
      R = -rd * std::log((1.0 - d.uniform()) * (1.0 - d.uniform()));
    } while (!(R < disk_cut * rd));
    const double phi = 2.0 * pi * d.uniform();
    const double z = g.disk_height * std::atanh(std::min(2.0 * d.uniform() - 1.0, 1.0 - 1e-12));
    const double c = std::cos(phi), s = std::sin(phi);
    p.x[3 * i] = R * c;
    p.x[3 * i + 1] = R * s;
    p.x[3 * i + 2] = z;
    const double sigma_surface = g.disk_mass / (2 * pi * rd * rd * disk_norm) * std::exp(-R / rd);
    const double sz2 = pi * G * sigma_surface * g.disk_height;
    const double sr2 = g.disk_sigma_ratio * g.disk_sigma_ratio * sz2;
    const double sp2 = 0.5 * sr2;  // epicyclic ratio of a flat rotation curve
    const double vc2 = G * total_mass(R) / R;
    const double vphi = std::sqrt(std::max(0.0, vc2 - sp2 + sr2 * (1.0 - 2.0 * R / rd)));
    const double vr = std::sqrt(sr2) * d.normal();
    const double vt = vphi + std::sqrt(sp2) * d.normal();
    p.v[3 * i] = vr * c - vt * s;
    p.v[3 * i + 1] = vr * s + vt * c;
    p.v[3 * i + 2] = std::sqrt(sz2) * d.normal();
    p.m[i] = mp;
  }
  centre(p);
  return p;
}

HostParticles read_particles(const std::string& path, const std::string& format) {
  std::string f = format;
  if (f == "auto") {
    const auto dot = path.find_last_of('.');
    const std::string ext = dot == std::string::npos ? "" : path.substr(dot + 1);
    f = (ext == "csv" || ext == "CSV") ? "csv" : "xyz";
  }
  HostParticles p = f == "csv" ? read_csv(path) : read_xyz_particles(path);
  if (p.size() < 2)
    throw core::InputError(core::SourceLocation{path, 0, 0},
                           "the particle file holds fewer than 2 particles");
  return p;
}

HostParticles make_initial_conditions(const core::Config& config) {
  const std::string type = config.string("initial.type");
  const int n = int(config.integer("system.n"));
  const double G = config.real("system.G");
  const auto seed = std::uint64_t(config.integer("system.seed"));
  const double mass = config.real("initial.mass");
  const double radius = config.real("initial.radius");
  if (type == "plummer") return plummer(n, mass, radius, G, seed);
  if (type == "hernquist")
    return hernquist(n, mass, radius, config.real("initial.truncation"), G, seed);
  if (type == "cold_sphere") return cold_sphere(n, mass, radius, seed);
  if (type == "kepler")
    return kepler(mass, config.real("initial.kepler.mass_ratio"),
                  config.real("initial.kepler.semi_major_axis"),
                  config.real("initial.kepler.eccentricity"), G);
  if (type == "galaxy") {
    GalaxyParams g{config.real("initial.galaxy.bulge_mass"),
                   config.real("initial.galaxy.bulge_scale"),
                   config.real("initial.galaxy.disk_mass"),
                   config.real("initial.galaxy.disk_scale"),
                   config.real("initial.galaxy.disk_height"),
                   config.real("initial.galaxy.disk_sigma_ratio"),
                   config.real("initial.galaxy.halo_mass"),
                   config.real("initial.galaxy.halo_scale"),
                   config.real("initial.galaxy.halo_truncation"),
                   config.string("initial.galaxy.halo_profile") == "nfw"};
    return galaxy(n, g, G, seed);
  }
  const std::string file = config.string("initial.file");
  if (file.empty()) config.fail("initial.file", "initial.type: file needs a particle file path");
  const core::FileOrigin origin{config.where("initial.file"), "initial.file"};
  core::check_input_file(file, "particle file", core::max_data_file_bytes, origin);
  return core::read_named_file(origin, file, "particle file", [&] {
    return read_particles(file, config.string("initial.format"));
  });
}

}  // namespace hayate::gravity

#pragma once
// Solid sites from the input: wall rows/columns for non-periodic boundaries and a list of
// obstacles (rectangles, plates, circles, PGM or PNG masks). Rasterized once on the host.
#include "config/config.hpp"
#include "fhp/fhp_lattice.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace hayate::fhp {

struct Obstacle {
  enum class Type { rectangle, plate, circle, mask } type = Type::rectangle;
  double x = 0, y = 0;               // lower-left corner (rectangle, mask), centre (plate, circle)
  double width = 0, height = 0;      // rectangle: columns x rows
  double length = 0, thickness = 1;  // plate: normal to x, length in lattice spacings
  double radius = 0;                 // circle, in lattice spacings
  std::string file;                  // mask: binary PGM (P5) or ASCII PGM (P2)
  double threshold = 0.5;            // mask: pixels darker than this fraction are solid
};

// Parses the `obstacles` records; a bad record fails at its position in the input file.
std::vector<Obstacle> read_obstacles(const core::Config& config);

// One flag per site (row-major), 1 = solid: walls where a boundary is not periodic, then every
// obstacle. Coordinates: site (x, y) is at X = x + (y odd)/2, Y = y sqrt(3)/2.
std::vector<std::uint8_t> solid_sites(LatticeShape shape, bool walls_x, bool walls_y,
                                      const std::vector<Obstacle>& obstacles);

// Reads a PGM image into grey levels in [0, 1] (row 0 at the top). Throws std::runtime_error.
std::vector<double> read_pgm(const std::string& path, int& width, int& height);
// A PNG (by its extension, any case) or PGM mask as grey levels in [0, 1], row 0 at the top.
std::vector<double> read_mask(const std::string& path, int& width, int& height);

}  // namespace hayate::fhp

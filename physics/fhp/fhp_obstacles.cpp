#include "fhp/fhp_obstacles.hpp"

#include <fmt/format.h>

#include "config/input_file.hpp"
#include "io/png.hpp"

#include <cctype>
#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

namespace hayate::fhp {

namespace {

std::string folder_of(const std::string& file) {
  const auto slash = file.find_last_of('/');
  return slash == std::string::npos ? std::string() : file.substr(0, slash + 1);
}

}  // namespace

std::vector<Obstacle> read_obstacles(const core::Config& config) {
  std::vector<Obstacle> out;
  for (const auto& item : config.records("obstacles")) {
    Obstacle o;
    const std::string type = item.string("type");
    const auto need = [&](const char* key) {
      if (!item.has(key)) item.fail("type", fmt::format("a {} needs the key '{}'", type, key));
      return item.real(key);
    };
    o.x = need("x");
    o.y = need("y");
    if (type == "rectangle") {
      o.type = Obstacle::Type::rectangle;
      o.width = need("width");
      o.height = need("height");
      if (o.width <= 0 || o.height <= 0) item.fail("width", "width and height must be positive");
    } else if (type == "plate") {
      o.type = Obstacle::Type::plate;
      o.length = need("length");
      if (item.has("thickness")) o.thickness = item.real("thickness");
      if (o.length <= 0 || o.thickness <= 0)
        item.fail("length", "length and thickness must be positive");
    } else if (type == "circle") {
      o.type = Obstacle::Type::circle;
      o.radius = need("radius");
      if (o.radius <= 0) item.fail("radius", "the radius must be positive");
    } else {
      o.type = Obstacle::Type::mask;
      if (!item.has("file")) item.fail("type", "a mask needs the key 'file' (a PGM or PNG image)");
      o.file = item.string("file");
      if (!o.file.empty() && o.file[0] != '/') o.file = folder_of(config.input_file()) + o.file;
      o.threshold = item.real("threshold");
      core::require_regular_file(o.file, "mask image", core::max_image_file_bytes,
                                 {item.where("file"), item.key_path("file")});
      int w = 0, h = 0;
      try {
        read_mask(o.file, w, h);
      } catch (const std::exception& e) {
        item.fail("file", e.what());
      }
    }
    out.push_back(o);
  }
  return out;
}

std::vector<double> read_mask(const std::string& path, int& width, int& height) {
  const auto dot = path.find_last_of('.');
  std::string ext = dot == std::string::npos ? "" : path.substr(dot + 1);
  for (auto& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (ext != "png") return read_pgm(path, width, height);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open '" + path + "'");
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                        std::istreambuf_iterator<char>());
  core::Image img(1, 1);
  try {
    img = core::decode_png(bytes);
  } catch (const std::exception& e) {
    throw std::runtime_error("'" + path + "': " + e.what());
  }
  width = img.width();
  height = img.height();
  std::vector<double> grey(std::size_t(width) * height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const core::Rgb c = img.get(x, y);
      grey[std::size_t(y) * width + x] = (c.r + c.g + c.b) / 765.0;
    }
  return grey;
}

std::vector<double> read_pgm(const std::string& path, int& width, int& height) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open '" + path + "'");
  std::string magic;
  in >> magic;
  if (magic != "P5" && magic != "P2") throw std::runtime_error("'" + path + "' is not a PGM file");
  // Header fields, skipping comments.
  auto next = [&]() {
    std::string tok;
    while (in >> tok) {
      if (tok[0] == '#') {
        std::string rest;
        std::getline(in, rest);
        continue;
      }
      return std::stol(tok);
    }
    throw std::runtime_error("'" + path + "': truncated PGM header");
  };
  width = int(next());
  height = int(next());
  const long maxval = next();
  if (width <= 0 || height <= 0 || maxval <= 0 || maxval > 65535)
    throw std::runtime_error("'" + path + "': bad PGM header");
  std::vector<double> grey(std::size_t(width) * height);
  if (magic == "P5") {
    in.get();  // the single whitespace after maxval
    const int bytes = maxval > 255 ? 2 : 1;
    std::vector<unsigned char> raw(grey.size() * bytes);
    if (!in.read(reinterpret_cast<char*>(raw.data()), std::streamsize(raw.size())))
      throw std::runtime_error("'" + path + "': truncated PGM data");
    for (std::size_t i = 0; i < grey.size(); ++i)
      grey[i] = (bytes == 2 ? raw[2 * i] * 256.0 + raw[2 * i + 1] : raw[i]) / double(maxval);
  } else {
    for (auto& g : grey) {
      long v = 0;
      if (!(in >> v)) throw std::runtime_error("'" + path + "': truncated PGM data");
      g = double(v) / double(maxval);
    }
  }
  return grey;
}

std::vector<std::uint8_t> solid_sites(LatticeShape shape, bool walls_x, bool walls_y,
                                      const std::vector<Obstacle>& obstacles) {
  const int nx = shape.nx, ny = shape.ny;
  std::vector<std::uint8_t> solid(std::size_t(shape.sites()), 0);
  auto at = [&](int x, int y) -> std::uint8_t& { return solid[std::size_t(y) * nx + x]; };
  if (walls_y)
    for (int x = 0; x < nx; ++x) at(x, 0) = at(x, ny - 1) = 1;
  if (walls_x)
    for (int y = 0; y < ny; ++y) at(0, y) = at(nx - 1, y) = 1;
  for (const auto& o : obstacles) {
    if (o.type == Obstacle::Type::mask) {
      int w = 0, h = 0;
      const auto grey = read_mask(o.file, w, h);
      // Image row 0 is the top: it maps to the highest lattice row of the mask.
      for (int r = 0; r < h; ++r)
        for (int c = 0; c < w; ++c) {
          const int x = int(std::lround(o.x)) + c, y = int(std::lround(o.y)) + (h - 1 - r);
          if (x >= 0 && x < nx && y >= 0 && y < ny && grey[std::size_t(r) * w + c] < o.threshold)
            at(x, y) = 1;
        }
      continue;
    }
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        const double X = x + 0.5 * (y & 1), Y = y * sqrt3_2;
        bool inside = false;
        switch (o.type) {
          case Obstacle::Type::rectangle:
            inside = x >= o.x && x < o.x + o.width && y >= o.y && y < o.y + o.height;
            break;
          case Obstacle::Type::plate:
            // A plate normal to the flow: thickness along x (columns), length along Y.
            inside = std::fabs(X - o.x) < 0.5 * o.thickness + 0.25 &&
                     std::fabs(Y - o.y * sqrt3_2) <= 0.5 * o.length;
            break;
          case Obstacle::Type::circle: {
            const double dx = X - o.x, dy = Y - o.y * sqrt3_2;
            inside = dx * dx + dy * dy <= o.radius * o.radius;
            break;
          }
          case Obstacle::Type::mask:
            break;
        }
        if (inside) at(x, y) = 1;
      }
  }
  return solid;
}

}  // namespace hayate::fhp

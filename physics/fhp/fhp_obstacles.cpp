#include "fhp/fhp_obstacles.hpp"

#include <fmt/format.h>

#include "io/input_file.hpp"
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
      core::check_input_file(o.file, "mask image", core::max_image_file_bytes,
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
  const std::string text = core::read_input_file(path, "mask image", core::max_image_file_bytes);
  const std::vector<std::uint8_t> bytes(text.begin(), text.end());
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
  const std::string text = core::read_input_file(path, "mask image", core::max_image_file_bytes);
  const auto fail = [&](const std::string& why) -> std::runtime_error {
    return std::runtime_error("'" + path + "': " + why);
  };
  std::size_t p = 0;
  const auto space = [&](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  };
  // Blanks and comments (from '#' to the end of the line) between header fields.
  const auto skip = [&] {
    while (p < text.size()) {
      if (space(text[p])) {
        ++p;
      } else if (text[p] == '#') {
        while (p < text.size() && text[p] != '\n') ++p;
      } else {
        break;
      }
    }
  };
  // A decimal field of at most 9 digits (no overflow), followed by a blank or the end.
  const auto field = [&](const char* what, bool header) -> long {
    if (header)
      skip();
    else
      while (p < text.size() && space(text[p])) ++p;
    const std::size_t begin = p;
    long v = 0;
    while (p < text.size() && text[p] >= '0' && text[p] <= '9' && p - begin < 9)
      v = 10 * v + (text[p++] - '0');
    if (p == begin) {
      if (p >= text.size()) throw fail(fmt::format("the file ends before {}", what));
      throw fail(fmt::format("expected {} (a decimal integer) at byte {}", what, p));
    }
    if (p < text.size() && !space(text[p]) && !(header && text[p] == '#'))
      throw fail(fmt::format("expected {} (a decimal integer below 10^9) at byte {}", what, begin));
    return v;
  };
  if (text.size() < 2 || text[0] != 'P' || (text[1] != '5' && text[1] != '2'))
    throw fail("is not a PGM file (P5 or P2)");
  const bool binary = text[1] == '5';
  p = 2;
  const long w = field("the width", true), h = field("the height", true);
  const long maxval = field("the maximum grey value", true);
  if (w <= 0 || h <= 0 || std::uint64_t(w) * std::uint64_t(h) > core::kMaxImagePixels)
    throw fail(fmt::format("image size {} x {} is empty or has more than {} pixels", w, h,
                           core::kMaxImagePixels));
  if (maxval <= 0 || maxval > 65535) throw fail("the maximum grey value must be 1 .. 65535");
  width = int(w);
  height = int(h);
  const std::size_t pixels = std::size_t(w) * std::size_t(h);
  if (binary) {
    ++p;  // the single blank after the maximum grey value
    const std::size_t bytes = maxval > 255 ? 2 : 1;
    if (p > text.size() || text.size() - p < pixels * bytes)
      throw fail(fmt::format("truncated PGM data: {} x {} pixels need {} bytes, the file has {}", w,
                             h, pixels * bytes, p > text.size() ? 0 : text.size() - p));
    std::vector<double> grey(pixels);
    const auto* raw = reinterpret_cast<const unsigned char*>(text.data() + p);
    for (std::size_t i = 0; i < pixels; ++i)
      grey[i] = (bytes == 2 ? raw[2 * i] * 256.0 + raw[2 * i + 1] : raw[i]) / double(maxval);
    return grey;
  }
  // Plain PGM: at least two bytes (a digit and a blank) per pixel but the last.
  if ((text.size() - p + 1) / 2 < pixels)
    throw fail(fmt::format("truncated PGM data: {} x {} pixels cannot fit in the {} bytes left", w,
                           h, text.size() - p));
  std::vector<double> grey(pixels);
  for (auto& g : grey) {
    const long v = field("a grey value", false);
    if (v > maxval) throw fail(fmt::format("grey value {} exceeds the maximum {}", v, maxval));
    g = double(v) / double(maxval);
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
      // Image row 0 is the top: it maps to the highest lattice row of the mask. Site numbers are
      // formed in double precision: a corner far outside the lattice cannot overflow an int.
      const double x0 = std::round(o.x), y0 = std::round(o.y);
      for (int r = 0; r < h; ++r)
        for (int c = 0; c < w; ++c) {
          const double x = x0 + c, y = y0 + (h - 1 - r);
          if (x >= 0 && x < nx && y >= 0 && y < ny && grey[std::size_t(r) * w + c] < o.threshold)
            at(int(x), int(y)) = 1;
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

#include "io/png.hpp"

#include "io/atomic_file.hpp"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace hayate::core {

Image::Image(int width, int height, Rgb fill) : width_(width), height_(height) {
  if (width <= 0 || height <= 0) throw std::invalid_argument("image: size must be positive");
  rgb_.resize(std::size_t(width) * height * 3);
  for (std::size_t i = 0; i < rgb_.size(); i += 3) {
    rgb_[i] = fill.r;
    rgb_[i + 1] = fill.g;
    rgb_[i + 2] = fill.b;
  }
}

void Image::set(int x, int y, Rgb c) {
  if (x < 0 || y < 0 || x >= width_ || y >= height_) return;
  const std::size_t i = (std::size_t(y) * width_ + x) * 3;
  rgb_[i] = c.r;
  rgb_[i + 1] = c.g;
  rgb_[i + 2] = c.b;
}

Rgb Image::get(int x, int y) const {
  const std::size_t i = (std::size_t(y) * width_ + x) * 3;
  return {rgb_[i], rgb_[i + 1], rgb_[i + 2]};
}

void Image::fill_rect(int x0, int y0, int x1, int y1, Rgb c) {
  for (int y = std::max(0, y0); y <= std::min(height_ - 1, y1); ++y)
    for (int x = std::max(0, x0); x <= std::min(width_ - 1, x1); ++x) set(x, y, c);
}

void Image::line(double x0, double y0, double x1, double y1, Rgb c) {
  const double len = std::max(std::fabs(x1 - x0), std::fabs(y1 - y0));
  const int n = std::max(1, int(std::ceil(len)));
  for (int k = 0; k <= n; ++k) {
    const double t = double(k) / n;
    set(int(std::lround(x0 + t * (x1 - x0))), int(std::lround(y0 + t * (y1 - y0))), c);
  }
}

void Image::arrow(double x0, double y0, double x1, double y1, Rgb c, double head) {
  line(x0, y0, x1, y1, c);
  const double dx = x1 - x0, dy = y1 - y0, len = std::hypot(dx, dy);
  if (len < 1e-9) return;
  const double ux = dx / len, uy = dy / len, h = std::min(head, 0.6 * len);
  // Two barbs at +-30 degrees from the reversed shaft.
  const double c30 = 0.8660254037844386, s30 = 0.5;
  line(x1, y1, x1 - h * (ux * c30 - uy * s30), y1 - h * (uy * c30 + ux * s30), c);
  line(x1, y1, x1 - h * (ux * c30 + uy * s30), y1 - h * (uy * c30 - ux * s30), c);
}

namespace {

void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  out.push_back(std::uint8_t(v >> 24));
  out.push_back(std::uint8_t(v >> 16));
  out.push_back(std::uint8_t(v >> 8));
  out.push_back(std::uint8_t(v));
}

std::uint32_t get_u32(const std::uint8_t* p) {
  return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) |
         std::uint32_t(p[3]);
}

void put_chunk(std::vector<std::uint8_t>& out, const char* type,
               const std::vector<std::uint8_t>& data) {
  put_u32(out, std::uint32_t(data.size()));
  const std::size_t start = out.size();
  out.insert(out.end(), type, type + 4);
  out.insert(out.end(), data.begin(), data.end());
  const uLong crc = crc32(0L, out.data() + start, uInt(out.size() - start));
  put_u32(out, std::uint32_t(crc));
}

constexpr std::uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

int paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

// Prediction of byte i of a scanline by filter type f (PNG specification, section 9), from the
// reconstructed bytes of this line (cur) and the previous one (prev, zeros for the first line).
int predict(int f, const std::uint8_t* cur, const std::uint8_t* prev, std::size_t i, int bpp) {
  const int a = i >= std::size_t(bpp) ? cur[i - bpp] : 0, b = prev[i];
  const int c = i >= std::size_t(bpp) ? prev[i - bpp] : 0;
  switch (f) {
    case 1:
      return a;
    case 2:
      return b;
    case 3:
      return (a + b) / 2;
    case 4:
      return paeth(a, b, c);
    default:
      return 0;
  }
}

}  // namespace

std::vector<std::uint8_t> encode_png(const Image& image) {
  const int w = image.width(), h = image.height();
  // Scanlines, each with the filter whose output has the smallest sum of |signed bytes| (the
  // specification's recommended heuristic); it shrinks smooth colour maps several times.
  const std::size_t stride = std::size_t(w) * 3;
  const std::vector<std::uint8_t> zeros(stride, 0);
  std::vector<std::uint8_t> raw;
  raw.reserve(std::size_t(h) * (stride + 1));
  std::vector<std::uint8_t> line(stride), best_line(stride);
  for (int y = 0; y < h; ++y) {
    const std::uint8_t* cur = image.rgb().data() + std::size_t(y) * stride;
    const std::uint8_t* prev = y > 0 ? cur - stride : zeros.data();
    long best_cost = -1;
    int best = 0;
    for (int f = 0; f < 5; ++f) {
      long cost = 0;
      for (std::size_t i = 0; i < stride; ++i) {
        line[i] = std::uint8_t(cur[i] - predict(f, cur, prev, i, 3));
        cost += std::abs(int(std::int8_t(line[i])));
      }
      if (best_cost < 0 || cost < best_cost) {
        best_cost = cost;
        best = f;
        best_line.swap(line);
      }
    }
    raw.push_back(std::uint8_t(best));
    raw.insert(raw.end(), best_line.begin(), best_line.end());
  }
  uLongf packed_size = compressBound(uLong(raw.size()));
  std::vector<std::uint8_t> packed(packed_size);
  if (compress2(packed.data(), &packed_size, raw.data(), uLong(raw.size()), 6) != Z_OK)
    throw std::runtime_error("png: zlib compression failed");
  packed.resize(packed_size);

  std::vector<std::uint8_t> out(signature, signature + 8);
  std::vector<std::uint8_t> ihdr;
  put_u32(ihdr, std::uint32_t(w));
  put_u32(ihdr, std::uint32_t(h));
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});  // 8 bits, truecolour, deflate, no filter, no interlace
  put_chunk(out, "IHDR", ihdr);
  put_chunk(out, "IDAT", packed);
  put_chunk(out, "IEND", {});
  return out;
}

void write_png(const std::string& path, const Image& image) {
  const auto bytes = encode_png(image);
  AtomicFile file(path, true);
  file.stream().write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  file.commit();
}

Image decode_png(const std::vector<std::uint8_t>& bytes) {
  const auto fail = [](const std::string& why) -> Image {
    throw std::runtime_error("png: " + why);
  };
  if (bytes.size() < 8 || std::memcmp(bytes.data(), signature, 8) != 0) fail("bad signature");
  // Every length and offset below is checked against the bytes present before it is used, and
  // the image size against the data present before anything is allocated for it.
  std::size_t pos = 8;
  std::uint32_t w = 0, h = 0;
  int channels = 0;
  bool have_header = false;
  std::vector<std::uint8_t> packed;
  while (bytes.size() - pos >= 12) {
    const std::uint32_t len = get_u32(&bytes[pos]);
    if (len > bytes.size() - pos - 12) fail("truncated chunk");
    const std::string type(reinterpret_cast<const char*>(&bytes[pos + 4]), 4);
    const std::uint8_t* data = &bytes[pos + 8];
    const uLong crc = crc32(0L, &bytes[pos + 4], uInt(len + 4));
    if (crc != get_u32(data + len)) fail("CRC mismatch in " + type);
    if (type == "IHDR") {
      if (have_header) fail("more than one IHDR chunk");
      if (len != 13) fail("the IHDR chunk has " + std::to_string(len) + " bytes, not 13");
      w = get_u32(data);
      h = get_u32(data + 4);
      // Grey, RGB, grey + alpha, RGBA at 8 bits per sample, deflate, adaptive filters, not
      // interlaced.
      const int colour = data[9];
      channels = colour == 0 ? 1 : colour == 2 ? 3 : colour == 4 ? 2 : colour == 6 ? 4 : 0;
      if (data[8] != 8 || channels == 0 || data[10] != 0 || data[11] != 0 || data[12] != 0)
        fail("only 8-bit grey, RGB, grey+alpha or RGBA images without interlacing are supported");
      have_header = true;
    } else if (type == "IDAT") {
      if (!have_header) fail("image data before the IHDR chunk");
      packed.insert(packed.end(), data, data + len);
    } else if (type == "IEND") {
      break;
    }
    pos += 12 + std::size_t(len);
  }
  if (!have_header) fail("missing IHDR");
  if (w == 0 || h == 0 || std::uint64_t(w) * h > kMaxImagePixels)
    fail("image size " + std::to_string(w) + " x " + std::to_string(h) +
         " is empty or has more than " + std::to_string(kMaxImagePixels) + " pixels");
  const std::size_t stride = std::size_t(w) * std::size_t(channels);
  const std::size_t raw_bytes = std::size_t(h) * (stride + 1);
  // Deflate expands at most 1032-fold: image data that short cannot hold w x h pixels.
  if (raw_bytes / 1032 > packed.size() + 1)
    fail("the image data (" + std::to_string(packed.size()) + " bytes) is too short for " +
         std::to_string(w) + " x " + std::to_string(h) + " pixels");
  std::vector<std::uint8_t> raw(raw_bytes);
  uLongf raw_size = uLongf(raw.size());
  if (uncompress(raw.data(), &raw_size, packed.data(), uLong(packed.size())) != Z_OK ||
      raw_size != raw.size())
    fail("bad image data");
  Image image(static_cast<int>(w), static_cast<int>(h));
  std::vector<std::uint8_t> prev(stride, 0), cur(stride);
  for (std::uint32_t y = 0; y < h; ++y) {
    const std::uint8_t* row = &raw[std::size_t(y) * (stride + 1)];
    const int f = row[0];
    if (f > 4) fail("unknown filter type");
    for (std::size_t i = 0; i < stride; ++i)
      cur[i] = std::uint8_t(row[1 + i] + predict(f, cur.data(), prev.data(), i, channels));
    for (std::uint32_t x = 0; x < w; ++x) {
      const std::uint8_t* px = &cur[std::size_t(x) * channels];
      image.set(int(x), int(y),
                channels >= 3 ? Rgb{px[0], px[1], px[2]} : Rgb{px[0], px[0], px[0]});
    }
    prev.swap(cur);
  }
  return image;
}

Rgb colormap(double t) {
  // Viridis sampled at 9 points, linearly interpolated.
  static const double stops[9][3] = {{68, 1, 84},    {71, 44, 122},  {59, 81, 139},
                                     {44, 113, 142}, {33, 144, 141}, {39, 173, 129},
                                     {92, 200, 99},  {170, 220, 50}, {253, 231, 37}};
  if (!(t > 0)) t = 0;
  if (t > 1) t = 1;
  const double f = t * 8;
  const int i = std::min(7, int(f));
  const double a = f - i;
  Rgb c;
  c.r = std::uint8_t(std::lround(stops[i][0] + a * (stops[i + 1][0] - stops[i][0])));
  c.g = std::uint8_t(std::lround(stops[i][1] + a * (stops[i + 1][1] - stops[i][1])));
  c.b = std::uint8_t(std::lround(stops[i][2] + a * (stops[i + 1][2] - stops[i][2])));
  return c;
}

}  // namespace hayate::core

#pragma once
// A small RGB raster with line drawing and a PNG encoder (8-bit RGB, adaptive filters, zlib
// deflate) for pictures of lattice fields, written through AtomicFile like every other output;
// and a decoder for 8-bit grey/RGB/alpha PNGs (obstacle masks, tests).
#include <cstdint>
#include <string>
#include <vector>

namespace hayate::core {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb& o) const { return r == o.r && g == o.g && b == o.b; }
};

class Image {
 public:
  Image(int width, int height, Rgb fill = {255, 255, 255});

  int width() const { return width_; }
  int height() const { return height_; }
  // Pixel (x, y) with y = 0 at the top; writes outside the image are ignored.
  void set(int x, int y, Rgb c);
  Rgb get(int x, int y) const;
  void fill_rect(int x0, int y0, int x1, int y1, Rgb c);  // inclusive corners
  // Anti-aliasing-free line and an arrow with a head of the given length (pixels).
  void line(double x0, double y0, double x1, double y1, Rgb c);
  void arrow(double x0, double y0, double x1, double y1, Rgb c, double head);
  const std::vector<std::uint8_t>& rgb() const { return rgb_; }

 private:
  int width_, height_;
  std::vector<std::uint8_t> rgb_;
};

// The PNG file contents of an image.
std::vector<std::uint8_t> encode_png(const Image& image);
void write_png(const std::string& path, const Image& image);
// Decodes 8-bit grey, RGB, grey+alpha and RGBA PNGs without interlacing (alpha is dropped,
// grey becomes r = g = b), of at most kMaxImagePixels pixels. Throws std::runtime_error for
// anything else or a corrupt file, reading no byte past the end of `bytes`.
inline constexpr std::uint64_t kMaxImagePixels = std::uint64_t(1) << 26;
Image decode_png(const std::vector<std::uint8_t>& bytes);

// Viridis-like perceptual colour map, t in [0, 1] (clamped).
Rgb colormap(double t);

}  // namespace hayate::core

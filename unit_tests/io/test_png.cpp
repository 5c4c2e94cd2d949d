// PNG encoder: round trip through the decoder, valid structure, colour map ends.
#include "io/png.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>

namespace hayate::core {
namespace {

TEST(Png, RoundTrip) {
  Image img(37, 11, {10, 20, 30});
  img.set(0, 0, {255, 0, 0});
  img.set(36, 10, {0, 255, 0});
  img.arrow(2, 5, 30, 5, {1, 2, 3}, 4);
  const auto bytes = encode_png(img);
  ASSERT_GT(bytes.size(), 8u);
  EXPECT_EQ(bytes[1], 'P');
  const Image back = decode_png(bytes);
  ASSERT_EQ(back.width(), 37);
  ASSERT_EQ(back.height(), 11);
  EXPECT_EQ(back.rgb(), img.rgb());
  EXPECT_EQ(back.get(0, 0), (Rgb{255, 0, 0}));
  EXPECT_EQ(back.get(16, 5), (Rgb{1, 2, 3}));  // on the arrow shaft
}

TEST(Png, SmoothImagesRoundTripThroughFilters) {
  // Gradients make the encoder choose Sub, Up, Average and Paeth filters.
  Image img(64, 48);
  for (int y = 0; y < 48; ++y)
    for (int x = 0; x < 64; ++x) img.set(x, y, colormap((x + 2 * y) / 160.0));
  img.arrow(5, 40, 60, 3, {255, 255, 255}, 6);
  const auto bytes = encode_png(img);
  EXPECT_LT(bytes.size(), 64u * 48u * 3u / 4u);  // filters make it compress well
  EXPECT_EQ(decode_png(bytes).rgb(), img.rgb());
}

// A grey PNG as other tools write it: colour type 0, rows filtered with Up and Paeth.
TEST(Png, DecodesFilteredGreyImages) {
  const int w = 5, h = 3;
  const std::uint8_t grey[h][w] = {
      {0, 50, 100, 150, 200}, {10, 60, 110, 160, 210}, {0, 0, 255, 255, 0}};
  std::vector<std::uint8_t> raw;
  for (int y = 0; y < h; ++y) {
    const int f = y == 1 ? 2 : y == 2 ? 4 : 0;  // none, Up, Paeth
    raw.push_back(std::uint8_t(f));
    for (int x = 0; x < w; ++x) {
      const int a = x > 0 ? grey[y][x - 1] : 0, b = y > 0 ? grey[y - 1][x] : 0;
      const int c = x > 0 && y > 0 ? grey[y - 1][x - 1] : 0;
      int pred = 0;
      if (f == 2) pred = b;
      if (f == 4) {
        const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
        pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      raw.push_back(std::uint8_t(grey[y][x] - pred));
    }
  }
  uLongf size = compressBound(uLong(raw.size()));
  std::vector<std::uint8_t> packed(size);
  ASSERT_EQ(compress2(packed.data(), &size, raw.data(), uLong(raw.size()), 9), Z_OK);
  packed.resize(size);
  std::vector<std::uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  const auto u32 = [](std::vector<std::uint8_t>& o, std::uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) o.push_back(std::uint8_t(v >> s));
  };
  const auto chunk = [&](const char* type, const std::vector<std::uint8_t>& data) {
    u32(png, std::uint32_t(data.size()));
    const std::size_t start = png.size();
    png.insert(png.end(), type, type + 4);
    png.insert(png.end(), data.begin(), data.end());
    u32(png, std::uint32_t(crc32(0L, png.data() + start, uInt(png.size() - start))));
  };
  std::vector<std::uint8_t> ihdr;
  u32(ihdr, w);
  u32(ihdr, h);
  ihdr.insert(ihdr.end(), {8, 0, 0, 0, 0});
  chunk("IHDR", ihdr);
  chunk("IDAT", packed);
  chunk("IEND", {});
  const Image img = decode_png(png);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) EXPECT_EQ(img.get(x, y), (Rgb{grey[y][x], grey[y][x], grey[y][x]}));
}

TEST(Png, CorruptionIsDetected) {
  auto bytes = encode_png(Image(4, 4));
  bytes[bytes.size() / 2] ^= 0xff;
  EXPECT_THROW(decode_png(bytes), std::runtime_error);
}

TEST(Png, ColourMapEnds) {
  EXPECT_EQ(colormap(0), (Rgb{68, 1, 84}));
  EXPECT_EQ(colormap(1), (Rgb{253, 231, 37}));
  EXPECT_EQ(colormap(-3), colormap(0));
}

}  // namespace
}  // namespace hayate::core

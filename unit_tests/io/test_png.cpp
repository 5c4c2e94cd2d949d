// PNG encoder: round trip through the decoder, valid structure, colour map ends.
#include "io/png.hpp"

#include <gtest/gtest.h>

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

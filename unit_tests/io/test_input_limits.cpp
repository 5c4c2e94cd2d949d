// Readers of files a run takes as input (the input and model files, particle and data files,
// masks) under hostile files: special files are refused without blocking, no reader reads past
// the end of what it was given, and no size read from a file is allocated before the data that
// it announces is there.
#include "cli_runner.hpp"
#include "config/error.hpp"
#include "fhp/fhp_obstacles.hpp"
#include "gravity/initial_conditions.hpp"
#include "io/input_file.hpp"
#include "io/png.hpp"
#include "io/xyz.hpp"
#include "md/lammps_data.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace hayate {
namespace {

namespace fs = std::filesystem;

fs::path fresh(const std::string& name) {
  const fs::path dir = test::scratch_path("input_limits") / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string write(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(InputFile, SpecialFilesAreRefusedWithoutBlocking) {
  const fs::path dir = fresh("special");
  const std::string fifo = (dir / "pipe").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_NE(error_of([&] {
              core::read_input_file(fifo, "model file", 1 << 20);
            }).find("pipe: is not a regular file (a FIFO); give a regular model file"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              core::read_input_file("/dev/zero", "model file", 1 << 20);
            }).find("/dev/zero: is not a regular file (a character device)"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              core::read_input_file(dir.string(), "input file", 1 << 20);
            }).find("is a directory, not an input file"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              core::read_input_file((dir / "none").string(), "input file", 9);
            }).find("none: cannot open the input file (no such file)"),
            std::string::npos);
  // Larger than allowed: refused from its size, not read (a sparse file costs no disk).
  const std::string big = (dir / "big.yaml").string();
  { std::ofstream(big) << ""; }
  fs::resize_file(big, std::uintmax_t(64) << 20);
  EXPECT_NE(error_of([&] {
              core::read_input_file(big, "input file", 1 << 20);
            }).find("is 67108864 bytes, more than the 1048576 an input file may have"),
            std::string::npos);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  const std::string ok = write(dir / "ok.yaml", "a: 1\n");
  EXPECT_EQ(core::read_input_file(ok, "input file", 5), "a: 1\n");
  EXPECT_TRUE(core::path_exists(fifo));
  EXPECT_FALSE(core::path_exists((dir / "none").string()));
}

// A valid 4 x 2 grey PNG, and one with chunks spliced in.
std::vector<std::uint8_t> chunk(const char* type, const std::vector<std::uint8_t>& data) {
  std::vector<std::uint8_t> out;
  const auto put = [&](std::uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) out.push_back(std::uint8_t(v >> s));
  };
  put(std::uint32_t(data.size()));
  out.insert(out.end(), type, type + 4);
  out.insert(out.end(), data.begin(), data.end());
  // zlib's crc32 returns its initial value, not the running one, for a null buffer (an empty
  // vector's data()): an empty chunk's CRC is that of its type alone.
  uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(type), 4);
  if (!data.empty()) crc = crc32(crc, data.data(), uInt(data.size()));
  put(std::uint32_t(crc));
  return out;
}

std::vector<std::uint8_t> png(const std::vector<std::uint8_t>& ihdr, bool with_data = true) {
  std::vector<std::uint8_t> out = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  const auto add = [&](const std::vector<std::uint8_t>& c) {
    out.insert(out.end(), c.begin(), c.end());
  };
  add(chunk("IHDR", ihdr));
  if (with_data) {
    std::vector<std::uint8_t> raw = {0, 1, 2, 3, 4, 0, 5, 6, 7, 8};
    uLongf size = compressBound(uLong(raw.size()));
    std::vector<std::uint8_t> packed(size);
    compress(packed.data(), &size, raw.data(), uLong(raw.size()));
    packed.resize(size);
    add(chunk("IDAT", packed));
  }
  add(chunk("IEND", {}));
  return out;
}

const std::vector<std::uint8_t> header_4x2 = {0, 0, 0, 4, 0, 0, 0, 2, 8, 0, 0, 0, 0};

TEST(PngDecoder, ShortAndHostileHeadersAreErrors) {
  EXPECT_EQ(core::decode_png(png(header_4x2)).width(), 4);
  // The reproducer: an IHDR shorter than 13 bytes was read past its end.
  for (std::size_t n = 0; n < 13; ++n) {
    const std::vector<std::uint8_t> shortened(header_4x2.begin(), header_4x2.begin() + n);
    EXPECT_NE(error_of([&] { core::decode_png(png(shortened)); }).find("not 13"), std::string::npos)
        << n;
  }
  // Sizes that would allocate gigabytes for a few bytes of image data.
  const std::vector<std::uint8_t> huge = {0x7f, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff,
                                          0xff, 8,    0,    0,    0,    0};
  EXPECT_NE(error_of([&] { core::decode_png(png(huge)); }).find("pixels"), std::string::npos);
  const std::vector<std::uint8_t> wide = {0, 0, 0x20, 0, 0, 0, 0x20, 0, 8, 0, 0, 0, 0};  // 8192^2
  EXPECT_NE(error_of([&] { core::decode_png(png(wide)); }).find("too short for 8192 x 8192"),
            std::string::npos);
  std::vector<std::uint8_t> zero = header_4x2;
  zero[3] = 0;
  EXPECT_NE(error_of([&] { core::decode_png(png(zero)); }).find("0 x 2"), std::string::npos);
  std::vector<std::uint8_t> interlaced = header_4x2;
  interlaced[12] = 1;
  EXPECT_NE(error_of([&] { core::decode_png(png(interlaced)); }).find("interlacing"),
            std::string::npos);
  EXPECT_NE(error_of([&] { core::decode_png(png(header_4x2, false)); }).find("bad image data"),
            std::string::npos);
}

TEST(PngDecoder, EveryTruncationAndByteFlipFailsCleanly) {
  const std::vector<std::uint8_t> good = png(header_4x2);
  for (std::size_t n = 0; n < good.size(); ++n) {
    const std::vector<std::uint8_t> cut(good.begin(), good.begin() + n);
    try {
      core::decode_png(cut);
    } catch (const std::runtime_error&) {
    }
  }
  std::mt19937 rng(68);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<std::uint8_t> bytes = good;
    for (int k = 0; k < 3; ++k) bytes[rng() % bytes.size()] = std::uint8_t(rng());
    // A length field pointing past the end must not be followed.
    if (trial % 7 == 0) bytes[8] = bytes[9] = 0xff;
    try {
      core::decode_png(bytes);
    } catch (const std::runtime_error&) {
    }
  }
}

TEST(PgmReader, HeadersAndDataAreCheckedBeforeUse) {
  const fs::path dir = fresh("pgm");
  int w = 0, h = 0;
  const auto grey = fhp::read_pgm(write(dir / "ok.pgm", "P2\n# c\n2 2\n255\n0 255\n255 0\n"), w, h);
  ASSERT_EQ(grey.size(), 4u);
  EXPECT_EQ(grey[1], 1.0);
  const std::string p5 = std::string("P5\n2 2\n255\n") + std::string("\x00\xff\xff", 3);
  struct Case {
    std::string bytes, expected;
  };
  const Case cases[] = {
      {p5, "truncated PGM data: 2 x 2 pixels need 4 bytes, the file has 3"},
      {"P5\n100000 100000\n255\n", "has more than 67108864 pixels"},
      {"P5\n99999999999 1\n255\n", "below 10^9"},
      {"P2\n2 2\n255\n0 1 2\n", "the file ends before a grey value"},
      {"P2\n2 2\n255\n0 1 2 300\n", "grey value 300 exceeds the maximum 255"},
      {"P2\n2 2\n0\n0 1 2 3\n", "the maximum grey value must be 1 .. 65535"},
      {"P2\n2", "the file ends before the height"},
      {"P2\n-2 2\n255\n", "expected the width"},
      {"P7\n", "is not a PGM file"},
      {"", "is not a PGM file"},
      {"P2\n8000 8000\n255\n1 2 3\n", "cannot fit in the"},
  };
  for (const auto& c : cases) {
    const std::string e = error_of([&] { fhp::read_pgm(write(dir / "bad.pgm", c.bytes), w, h); });
    EXPECT_NE(e.find(c.expected), std::string::npos) << c.bytes.substr(0, 40) << " -> " << e;
  }
  EXPECT_NE(error_of([&] { fhp::read_mask("/dev/zero", w, h); }).find("character device"),
            std::string::npos);
}

TEST(XyzReader, OneSpeciesPerParticleAndFiniteNumbers) {
  const fs::path dir = fresh("xyz");
  // Two string properties used to give two species per particle: the species list ran ahead of
  // the positions and its readers indexed past them.
  const std::string two =
      write(dir / "two.xyz", "2\nProperties=species:S:1:name:S:1:pos:R:3\nA a 0 0 0\nB b 1 1 1\n");
  const core::XyzFrame f = core::read_xyz(two);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f.species[1], "B");
  EXPECT_EQ(f.column("pos")->values.size(), 6u);
  const std::string nan = write(dir / "nan.xyz", "1\nProperties=species:S:1:pos:R:3\nA 0 nan 0\n");
  EXPECT_NE(
      error_of([&] { core::read_xyz(nan); }).find("nan.xyz:3:5: property 'pos' is not finite"),
      std::string::npos)
      << error_of([&] { core::read_xyz(nan); });
  const std::string big = write(dir / "big.xyz", "2000000000\ncomment\nA 0 0 0\n");
  EXPECT_NE(error_of([&] { core::read_xyz(big); }).find("file ends after 1 of 2000000000"),
            std::string::npos);
  EXPECT_NE(error_of([&] { core::read_xyz(dir.string()); }).find("is a directory"),
            std::string::npos);
}

TEST(LammpsDataReader, CountsFromTheHeaderAreNotAllocated) {
  const fs::path dir = fresh("data");
  const std::string file = write(dir / "huge.data",
                                 "t\n\n2147483647 atoms\n1 atom types\n0 6 xlo xhi\n0 6 ylo yhi\n"
                                 "0 6 zlo zhi\n\nAtoms # atomic\n\n1 1 1 1 1\n");
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_NE(error_of([&] {
              md::read_lammps_data(file);
            }).find("the Atoms section ends after 1 of 2147483647 entries"),
            std::string::npos);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  const std::string twice =
      write(dir / "twice.data",
            "t\n\n1 atoms\n1 atom types\n0 6 xlo xhi\n0 6 ylo yhi\n"
            "0 6 zlo zhi\n\nAtoms # atomic\n\n1 1 1 1 1\n\nAtoms\n\n1 1 2 2 2\n");
  EXPECT_NE(error_of([&] { md::read_lammps_data(twice); }).find("twice.data:13:1: a second Atoms"),
            std::string::npos)
      << error_of([&] { md::read_lammps_data(twice); });
  EXPECT_NE(error_of([&] { md::read_lammps_data("/dev/urandom"); }).find("character device"),
            std::string::npos);
}

TEST(ParticleCsv, SpecialFilesAreRefused) {
  const fs::path dir = fresh("csv");
  const std::string fifo = (dir / "p.csv").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(error_of([&] { gravity::read_particles(fifo, "csv"); }).find("FIFO"),
            std::string::npos);
}

}  // namespace
}  // namespace hayate

#include "cli_runner.hpp"
#include "config/error.hpp"
#include "io/atomic_file.hpp"
#include "io/csv_writer.hpp"
#include "io/xyz.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using namespace hayate::core;

namespace {
std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = hayate::test::scratch_path("io_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}
}  // namespace

TEST(AtomicFile, WritesUnderPartNameUntilCommitted) {
  const fs::path dir = fresh_dir("atomic");
  const std::string path = (dir / "a.txt").string();
  {
    AtomicFile f(path);
    f.stream() << "hello";
    EXPECT_TRUE(fs::exists(path + ".part"));
    EXPECT_FALSE(fs::exists(path));
    f.commit();
    EXPECT_FALSE(fs::exists(path + ".part"));
  }
  EXPECT_EQ(read_all(path), "hello");
}

TEST(AtomicFile, UncommittedFileNeverTakesItsName) {
  // A whole file left without its commit (an exception on the way) is half a file: removed.
  const fs::path dir = fresh_dir("atomic_dtor");
  const std::string path = (dir / "b.txt").string();
  {
    AtomicFile f(path);
    f.stream() << "partial";
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".part"));
}

TEST(AtomicFile, UnwritableFolderThrows) {
  EXPECT_THROW(AtomicFile("/nonexistent-folder/x.txt"), std::runtime_error);
}

TEST(CsvWriter, HeaderRowsAndQuoting) {
  const fs::path dir = fresh_dir("csv");
  const std::string path = (dir / "t.csv").string();
  {
    RunOutputs outputs;
    CsvWriter csv(outputs, path, {"step", "value", "note"});
    csv.row({std::int64_t{3}, 0.1, std::string("a,b")});
    csv.row({std::int64_t{-1}, 1e300, std::string("say \"hi\"")});
    EXPECT_THROW(csv.row({std::int64_t{1}}), std::logic_error);
    outputs.commit();
  }
  EXPECT_EQ(read_all(path), "step,value,note\n3,0.1,\"a,b\"\n-1,1e+300,\"say \"\"hi\"\"\"\n");
}

TEST(CsvWriter, RealsRoundTripExactly) {
  const double x = 0.1 + 0.2;
  double back = 0;
  std::istringstream(format_csv_value(x)) >> back;
  EXPECT_EQ(back, x);
}

TEST(Xyz, RoundTripWithBoxAndInfo) {
  const fs::path dir = fresh_dir("xyz");
  const std::string path = (dir / "p.xyz").string();
  XyzFrame f;
  f.species = {"A", "B"};
  f.columns = {{"pos", 3, {0.1, 0.2, 0.3, 1.0 / 3.0, -2.0, 5e-8}}, {"mass", 1, {1.5, 2.5}}};
  f.box = std::array<double, 3>{10, 11, 12};
  f.info = {{"Time", "0.5"}, {"Step", "7"}};
  {
    RunOutputs outputs;
    XyzWriter w(outputs, path);
    w.write(f);
    f.columns[1].values = {9, 9};
    w.write(f);
    outputs.commit();
  }
  const XyzFrame first = read_xyz(path, 0);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first.species[1], "B");
  ASSERT_NE(first.column("pos"), nullptr);
  EXPECT_EQ(first.column("pos")->values[3], 1.0 / 3.0);
  EXPECT_EQ(first.column("mass")->values[1], 2.5);
  ASSERT_TRUE(first.box.has_value());
  EXPECT_EQ((*first.box)[2], 12);
  EXPECT_EQ(first.info[0].first, "pbc");
  const XyzFrame last = read_xyz(path, -1);
  EXPECT_EQ(last.column("mass")->values[0], 9);
}

TEST(Xyz, ErrorsNameLineAndColumn) {
  const fs::path dir = fresh_dir("xyz_bad");
  const std::string path = (dir / "bad.xyz").string();
  {
    std::ofstream out(path);
    out << "2\nProperties=species:S:1:pos:R:3\nA 0 0 0\nB 1 x 2\n";
  }
  try {
    read_xyz(path);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(
        std::string(e.what()).find("bad.xyz:4:5: expected a number for property 'pos', got 'x'"),
        std::string::npos)
        << e.what();
  }
  {
    std::ofstream out(path);
    out << "3\ncomment\nA 0 0 0\n";
  }
  EXPECT_THROW(read_xyz(path), InputError);
  {
    std::ofstream out(path);
    out << "two\n";
  }
  EXPECT_THROW(read_xyz(path), InputError);
}

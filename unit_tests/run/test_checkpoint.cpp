#include "cli_runner.hpp"
#include "config/error.hpp"
#include "run/checkpoint.hpp"
#include "run/timers.hpp"
#include "test_spaces.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace hayate::core;

namespace {
std::string temp_file(const std::string& name) {
  const fs::path dir = hayate::test::scratch_path("checkpoint");
  fs::create_directories(dir);
  return (dir / name).string();
}

std::string write_sample(const std::string& name) {
  CheckpointWriter w("demo");
  w.put<std::int64_t>("step", 42);
  w.put<double>("time", 0.125);
  w.put_vector<float>("v", {1.f, 2.f, 3.f});
  w.put_string("label", "hello");
  const std::string path = temp_file(name);
  w.write(path);
  return path;
}
}  // namespace

TEST(Checkpoint, RoundTrip) {
  const CheckpointReader r(write_sample("round.bin"));
  EXPECT_EQ(r.problem(), "demo");
  EXPECT_EQ(r.get<std::int64_t>("step"), 42);
  EXPECT_EQ(r.get<double>("time"), 0.125);
  EXPECT_EQ(r.get_vector<float>("v"), (std::vector<float>{1.f, 2.f, 3.f}));
  EXPECT_EQ(r.get_string("label"), "hello");
  EXPECT_FALSE(r.has("missing"));
  EXPECT_THROW(r.get<double>("missing"), InputError);
  EXPECT_THROW(r.get<double>("step") + r.get<float>("step"), InputError);  // wrong size
}

TEST(Checkpoint, DetectsCorruption) {
  const std::string path = write_sample("corrupt.bin");
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(30);
    char c = 0;
    f.read(&c, 1);
    f.seekp(30);
    c = static_cast<char>(c ^ 0x10);
    f.write(&c, 1);
  }
  try {
    CheckpointReader r(path);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("checksum mismatch"), std::string::npos);
  }
}

TEST(Checkpoint, DetectsTruncationAndForeignFiles) {
  const std::string path = write_sample("trunc.bin");
  fs::resize_file(path, fs::file_size(path) - 9);
  EXPECT_THROW(CheckpointReader{path}, InputError);
  const std::string other = temp_file("other.bin");
  std::ofstream(other) << "not a checkpoint at all, just text";
  EXPECT_THROW(CheckpointReader{other}, InputError);
  EXPECT_THROW(CheckpointReader{temp_file("does_not_exist.bin")}, InputError);
}

TEST(Checkpoint, DuplicateEntryIsAProgrammingError) {
  CheckpointWriter w("demo");
  w.put<int>("a", 1);
  EXPECT_THROW(w.put<int>("a", 2), std::logic_error);
}

// Kernels live in free functions: nvcc rejects device lambdas inside gtest's private TestBody.
template <class View>
void fill_test_pattern(const View& a) {
  using Space = typename View::execution_space;
  Kokkos::parallel_for(
      "fill", Kokkos::RangePolicy<Space>(0, a.extent(0)), KOKKOS_LAMBDA(const int i) {
        for (int k = 0; k < 3; ++k) a(i, k) = 1.0 / (1 + i + 7 * k);
      });
}

template <class Space>
class CheckpointViews : public ::testing::Test {};
HAYATE_SPACE_TEST_SUITE(CheckpointViews);

TYPED_TEST(CheckpointViews, DeviceViewsRoundTripBitwise) {
  using Space = TypeParam;
  Kokkos::View<double**, typename Space::memory_space> a("a", 17, 3);
  fill_test_pattern(a);
  CheckpointWriter w("demo");
  w.put_view("a", a);
  const std::string path = temp_file("views_" + hayate::core::space_name<Space>() + ".bin");
  w.write(path);
  Kokkos::View<double**, typename Space::memory_space> b("b", 17, 3);
  CheckpointReader(path).get_view("a", b);
  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  for (int i = 0; i < 17; ++i)
    for (int k = 0; k < 3; ++k) EXPECT_EQ(ha(i, k), hb(i, k));
  Kokkos::View<double*, typename Space::memory_space> wrong("wrong", 5);
  EXPECT_THROW(CheckpointReader(path).get_view("a", wrong), InputError);
}

TEST(Timers, AccumulatesAndWritesCsv) {
  Timers t;
  t.add("walk", 1.0);
  t.add("sort", 0.5);
  t.add("walk", 2.0);
  { auto s = t.scope("scoped"); }
  ASSERT_EQ(t.phases().size(), 3u);
  EXPECT_EQ(t.phases()[0].calls, 2);
  EXPECT_DOUBLE_EQ(t.phases()[0].seconds, 3.0);
  EXPECT_EQ(t.phases()[2].calls, 1);
  const std::string path = temp_file("timers.csv");
  t.write_csv(path);
  std::ifstream in(path);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header, "phase,calls,total_s,mean_s,percent");
}

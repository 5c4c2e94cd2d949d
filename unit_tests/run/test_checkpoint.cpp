#include "checkpoint_craft.hpp"
#include "cli_runner.hpp"
#include "config/error.hpp"
#include "run/checkpoint.hpp"
#include "run/timers.hpp"
#include "test_spaces.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>

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

// The message of the InputError `f` throws ("" when it throws none).
template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return {};
}

namespace {
std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// `body` followed by its FNV-1a checksum: a file whose checksum is valid whatever it holds.
std::string with_checksum(std::string body) {
  const std::uint64_t sum = fnv1a(body.data(), body.size());
  body.append(reinterpret_cast<const char*>(&sum), sizeof sum);
  return body;
}
}  // namespace

TEST(Checkpoint, DetectsTruncationAndForeignFiles) {
  const std::string path = write_sample("trunc.bin");
  const std::string whole = file_bytes(path);
  // Cut at every length: each is refused as a checkpoint (too short for one, or its checksum no
  // longer matches), never read past its end.
  for (std::size_t n = 0; n < whole.size(); ++n) {
    write_bytes(path, whole.substr(0, n));
    const std::string message = input_error([&] { CheckpointReader r(path); });
    EXPECT_TRUE(message.find("not a hayate checkpoint") != std::string::npos ||
                message.find("checksum mismatch") != std::string::npos)
        << n << " bytes: " << message;
  }
  const std::string other = temp_file("other.bin");
  write_bytes(other, "not a checkpoint at all, just text");
  EXPECT_NE(input_error([&] { CheckpointReader r(other); }).find("not a hayate checkpoint"),
            std::string::npos);
  EXPECT_NE(input_error([&] {
              CheckpointReader r(temp_file("does_not_exist.bin"));
            }).find("cannot open the checkpoint (no such file)"),
            std::string::npos);
}

// A cut file given a valid checksum again (crafted, not an accident): the container itself
// finds every cut, at the byte where its framing runs out.
TEST(Checkpoint, CraftedTruncationIsFoundByTheFraming) {
  const std::string path = temp_file("crafted_trunc.bin");
  const std::string whole = file_bytes(write_sample("crafted_trunc_source.bin"));
  const std::string body = whole.substr(0, whole.size() - sizeof(std::uint64_t));
  // Magic and version (12 bytes) and the problem name's length: shorter than the smallest
  // container, refused as not a checkpoint; every longer cut runs out inside the framing.
  const std::size_t header = 8 + 4;
  for (std::size_t n = 0; n < body.size(); ++n) {
    write_bytes(path, with_checksum(body.substr(0, n)));
    const std::string message = input_error([&] { CheckpointReader r(path); });
    if (n + sizeof(std::uint64_t) < header + 3 * sizeof(std::uint64_t)) {
      EXPECT_NE(message.find("not a hayate checkpoint"), std::string::npos) << n << ": " << message;
    } else {
      EXPECT_TRUE(message.find("truncated or corrupt (at byte ") != std::string::npos ||
                  message.find("more than its") != std::string::npos)
          << n << " bytes: " << message;
    }
  }
  write_bytes(path, with_checksum(body));
  EXPECT_EQ(CheckpointReader(path).get<std::int64_t>("step"), 42);
}

// Another magic number or format version, with a valid checksum, is refused by name.
TEST(Checkpoint, WrongMagicOrVersionIsRefused) {
  const std::string path = temp_file("magic.bin");
  std::string body = file_bytes(write_sample("magic_source.bin"));
  body.resize(body.size() - sizeof(std::uint64_t));
  std::string bad = body;
  bad[7] = 'X';  // "HAYATECX"
  write_bytes(path, with_checksum(bad));
  EXPECT_NE(input_error([&] { CheckpointReader r(path); }).find("not a hayate checkpoint"),
            std::string::npos);
  bad = body;
  const std::uint32_t version = checkpoint_format_version + 1;
  std::memcpy(&bad[8], &version, sizeof version);
  write_bytes(path, with_checksum(bad));
  EXPECT_NE(input_error([&] { CheckpointReader r(path); })
                .find("checkpoint format version " + std::to_string(version) +
                      " (this hayate reads " + std::to_string(checkpoint_format_version) + ")"),
            std::string::npos);
}

// A crafted container (valid checksum) whose counts and lengths lie is refused before anything
// is sized from them: no allocation of a claimed size, no read past the end.
TEST(Checkpoint, CraftedFramingIsRefused) {
  using hayate::test::RawCheckpoint;
  const std::string path = temp_file("framing.bin");
  struct Case {
    RawCheckpoint raw;
    std::string expected;
  };
  std::vector<Case> cases;
  // An entry count far beyond what the file can hold (n = 2^63, n = -1).
  cases.push_back(
      {RawCheckpoint().str("demo").u64(std::uint64_t(1) << 63), "entries, more than its"});
  cases.push_back({RawCheckpoint().str("demo").u64(~std::uint64_t(0)), "entries, more than its"});
  // A name or an entry longer than the file.
  // (Enough bytes follow for one entry's two lengths, so the count itself is plausible.)
  cases.push_back(
      {RawCheckpoint().str("demo").u64(1).u64(~std::uint64_t(0)).raw("step").u64(0).u64(0),
       "truncated or corrupt"});
  cases.push_back(
      {RawCheckpoint().str("demo").u64(1).str("step").u64(std::uint64_t(1) << 62).raw("12345678"),
       "truncated or corrupt"});
  // A problem name of a gigabyte.
  cases.push_back(
      {RawCheckpoint().u64(std::uint64_t(1) << 30).raw("demo").u64(0), "truncated or corrupt"});
  // One entry twice; trailing bytes.
  cases.push_back(
      {RawCheckpoint().str("demo").u64(2).str("a").str("x").str("a").str("y"), "entry 'a' twice"});
  cases.push_back({RawCheckpoint().str("demo").u64(0).raw("junk"), "trailing data"});
  for (const auto& c : cases) {
    c.raw.write(path);
    const std::string message = input_error([&] { CheckpointReader r(path); });
    EXPECT_NE(message.find(c.expected), std::string::npos) << message;
    EXPECT_LT(message.size(), 1000u);
  }
}

namespace {
// A part file (a container of split entries) and the bytes of the manifest's list naming it.
struct PartFile {
  std::string name;
  std::uint64_t size = 0, checksum = 0;
};
PartFile write_part(const std::string& name, const std::vector<double>& x) {
  CheckpointWriter w("demo");
  w.put_vector("x", x);
  w.write(temp_file(name));
  std::ifstream in(temp_file(name), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  PartFile p{name, bytes.size(), 0};
  std::memcpy(&p.checksum, bytes.data() + bytes.size() - 8, 8);
  return p;
}
std::string u64s(std::initializer_list<std::uint64_t> values) {
  std::string out;
  for (const std::uint64_t v : values) out.append(reinterpret_cast<const char*>(&v), 8);
  return out;
}
std::string str(const std::string& s) {
  return u64s({s.size()}) + s;
}
// The list: generation 1, the parts, one split entry "x" of 8-byte records in `blocks` blocks.
// `copies` > 1 lists "x" that many times; `record_bytes` as given.
std::string part_list(const std::vector<PartFile>& parts, std::uint64_t blocks,
                      const std::vector<std::uint64_t>& records, std::uint64_t record_bytes = 8,
                      std::uint64_t copies = 1) {
  std::string list = u64s({1, parts.size()});
  for (const auto& p : parts) list += str(p.name) + u64s({p.size, p.checksum});
  list += u64s({copies});
  for (std::uint64_t c = 0; c < copies; ++c) {
    list += str("x") + u64s({record_bytes, blocks});
    for (const std::uint64_t r : records) list += u64s({r});
  }
  return list;
}
void write_manifest(const std::string& path, const std::string& list) {
  std::int64_t step = 7;
  hayate::test::RawCheckpoint()
      .str("demo")
      .u64(2)
      .str("step")
      .str(std::string(reinterpret_cast<const char*>(&step), 8))
      .str("hayate.parts")
      .str(list)
      .write(path);
}
}  // namespace

// A manifest's split entries are its parts joined block by block in rank order: the layout of
// one rank's file.
TEST(Checkpoint, PartsJoinIntoTheOneRankLayout) {
  // Two blocks (say x and y of every atom): rank 0 holds atoms 0 and 1, rank 1 atom 2.
  const auto p0 = write_part("join.bin.r0.g1", {10, 11, 20, 21});
  const auto p1 = write_part("join.bin.r1.g1", {12, 22});
  const std::string path = temp_file("join.bin");
  write_manifest(path, part_list({p0, p1}, 2, {2, 1}));
  const CheckpointReader r(path);
  EXPECT_EQ(r.parts(), 2u);
  EXPECT_EQ(r.get<std::int64_t>("step"), 7);
  EXPECT_EQ(r.get_vector<double>("x", 6), (std::vector<double>{10, 11, 12, 20, 21, 22}));
  EXPECT_FALSE(r.has("hayate.parts"));
  const auto list = CheckpointReader::part_list(path);
  EXPECT_EQ(list.generation, 1u);
  EXPECT_EQ(list.names, (std::vector<std::string>{"join.bin.r0.g1", "join.bin.r1.g1"}));
  EXPECT_TRUE(CheckpointReader::part_list(temp_file("no_such.bin")).names.empty());
  EXPECT_TRUE(CheckpointReader::part_list(write_sample("plain.bin")).names.empty());
}

// Nothing in a manifest is trusted either: counts, names, sizes and the parts themselves are
// checked before anything is sized or read from them.
TEST(Checkpoint, CraftedManifestsAreRefused) {
  const auto p0 = write_part("bad.bin.r0.g1", {1, 2});
  const auto p1 = write_part("bad.bin.r1.g1", {3});
  const std::string path = temp_file("bad.bin");
  auto changed = [](PartFile p, std::uint64_t size, std::uint64_t sum) {
    p.size += size;
    p.checksum += sum;
    return p;
  };
  auto named = [](PartFile p, const std::string& name) {
    p.name = name;
    return p;
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {u64s({1, std::uint64_t(1) << 62}), "part files, more than its list can hold"},
      {part_list({p0, named(p1, "../bad.bin.r1.g1")}, 1, {2, 1}), "not a file name"},
      {part_list({p0, named(p1, "")}, 1, {2, 1}), "not a file name"},
      {part_list({p0, p1}, 1, {2, std::uint64_t(1) << 61}), "claims more bytes than its part"},
      {part_list({p0, p1}, std::uint64_t(1) << 62, {2, 1}), "claims more bytes than its part"},
      {part_list({p0, p1}, 1, {~std::uint64_t(0), 2}), "claims too many records"},
      {part_list({p0, changed(p1, 0, 1)}, 1, {2, 1}), "of another checkpoint"},
      {part_list({p0, changed(p1, 8, 0)}, 1, {2, 1}), "of another checkpoint"},
      {part_list({p0, p1}, 1, {1, 1}), "its list says"},
      {part_list({p0, named(p1, "bad.bin.r9.g1")}, 1, {2, 1}), "bad.bin.r9.g1"},
      {part_list({p0, p1}, 1, {2, 1}) + "x", "trailing data"},
      // Records of no bytes or no blocks would let any count through the size checks.
      {part_list({p0, p1}, std::uint64_t(1) << 63, {2, 1}, 0), "records of 0 bytes or no blocks"},
      {part_list({p0, p1}, 0, {2, 1}), "records of 0 bytes or no blocks"},
      {part_list({p0, p1}, 1, {2, 1}, 8, 2), "entry 'x' twice"},
  };
  for (const auto& [list, expected] : cases) {
    write_manifest(path, list);
    // The list is checked when the manifest is read, each part when it is first read.
    const std::string message = input_error([&] { CheckpointReader(path).bytes("x"); });
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_LT(message.size(), 1000u);
  }
}

// A rank reads the parts it needs one at a time: a part is read and checked against the
// manifest when first asked for, so a corrupt part it never asks for costs it nothing.
TEST(Checkpoint, PartsReadOneAtATime) {
  const auto p0 = write_part("each.bin.r0.g1", {10, 11, 20, 21});
  auto p1 = write_part("each.bin.r1.g1", {12, std::nan("")});
  const std::string path = temp_file("each.bin");
  write_manifest(path, part_list({p0, p1}, 2, {2, 1}));
  {
    const CheckpointReader r(path);
    EXPECT_EQ(r.part_records("x", 0), 2u);
    EXPECT_EQ(r.part_records("x", 1), 1u);
    EXPECT_EQ(r.get_part_reals<double>("x", 0), (std::vector<double>{10, 11, 20, 21}));
    const std::string message = input_error([&] { r.get_part_reals<double>("x", 1); });
    EXPECT_NE(message.find("each.bin.r1.g1': entry 'x' element 1 holds a value that is not finite"),
              std::string::npos)
        << message;
    EXPECT_NE(input_error([&] { r.part_records("step", 0); }).find("is not split"),
              std::string::npos);
    EXPECT_NE(input_error([&] { r.part_records("y", 0); }).find("no entry 'y'"), std::string::npos);
  }
  // Part 1 changed since the manifest was written: found when part 1 is read, not before.
  p1.checksum += 1;
  write_manifest(path, part_list({p0, p1}, 2, {2, 1}));
  const CheckpointReader r(path);
  EXPECT_EQ(r.get_part_reals<double>("x", 0), (std::vector<double>{10, 11, 20, 21}));
  r.release_parts();
  for (const auto& read : std::vector<std::function<void()>>{
           [&] { r.get_part_reals<double>("x", 1); }, [&] { r.bytes("x"); }}) {
    const std::string message = input_error(read);
    EXPECT_NE(message.find("each.bin.r1.g1' is not the one this checkpoint was written with"),
              std::string::npos)
        << message;
  }
}

// Every typed accessor checks what it hands out: sizes, finite reals, booleans, integer ranges.
TEST(Checkpoint, TypedAccessorsCheckValues) {
  CheckpointWriter w("demo");
  w.put<std::int64_t>("n", -1);
  w.put<std::int64_t>("huge", std::int64_t(1) << 40);
  w.put<double>("nan", std::nan(""));
  w.put<double>("inf", std::numeric_limits<double>::infinity());
  w.put<std::uint8_t>("flag", 7);
  w.put_vector<std::int32_t>("types", {0, 1, 1000, 2});
  w.put_vector<double>("x", {1.0, std::nan(""), 3.0});
  w.put_string("long", std::string(5000, 'a'));
  const std::string path = temp_file("typed.bin");
  w.write(path);
  const CheckpointReader r(path);
  EXPECT_NE(input_error([&] { r.get<std::int64_t>("n", 0, 100); }).find("entry 'n' (at byte"),
            std::string::npos);
  EXPECT_NE(input_error([&] {
              r.get<std::int64_t>("n", 0, 100);
            }).find("holds -1, expected an integer in [0, 100]"),
            std::string::npos);
  EXPECT_NE(input_error([&] { r.get<std::int64_t>("huge", 0, 1 << 30); }).find("1099511627776"),
            std::string::npos);
  EXPECT_NE(input_error([&] { r.get<double>("nan"); }).find("not finite"), std::string::npos);
  EXPECT_NE(input_error([&] { r.get<double>("inf"); }).find("not finite"), std::string::npos);
  EXPECT_NE(input_error([&] { r.get<bool>("flag"); }).find("not a boolean"), std::string::npos);
  EXPECT_NE(input_error([&] {
              r.get_vector<std::int32_t>("types", 4, 0, 63);
            }).find("entry 'types' element 2 (at byte"),
            std::string::npos);
  EXPECT_NE(input_error([&] {
              r.get_vector<std::int32_t>("types", 5, 0, 63);
            }).find("holds 16 bytes, this run expects 20"),
            std::string::npos);
  EXPECT_NE(input_error([&] { r.get_vector<double>("x"); }).find("element 1"), std::string::npos);
  EXPECT_NE(input_error([&] { r.check_reals<double>("x", 3); }).find("element 1"),
            std::string::npos);
  EXPECT_NE(input_error([&] { r.get_string("long"); }).find("at most 4096"), std::string::npos);
  EXPECT_NE(input_error([&] { r.get<double>("absent"); }).find("no entry 'absent'"),
            std::string::npos);
  const std::vector<std::int32_t> perm{2, 0, 1}, repeated{0, 2, 2}, outside{0, 1, 3};
  EXPECT_EQ(hayate::core::first_non_permutation(perm), CheckpointReader::npos);
  EXPECT_EQ(hayate::core::first_non_permutation(repeated), 2u);
  EXPECT_EQ(hayate::core::first_non_permutation(outside), 2u);
}

// The input key that named the checkpoint is where its errors point.
TEST(Checkpoint, ErrorsPointAtTheKeyThatNamedTheFile) {
  const std::string path = write_sample("origin.bin");
  const hayate::core::FileOrigin origin{{"in.yaml", 7, 12}, "checkpoint.restart"};
  const CheckpointReader r(path, origin);
  const std::string message = input_error([&] { r.get<std::int64_t>("step", 0, 10); });
  EXPECT_EQ(message.rfind("in.yaml:7:12: 'checkpoint.restart': checkpoint '" + path +
                              "': entry 'step' (at byte ",
                          0),
            0u)
      << message;
  EXPECT_NE(message.find("holds 42, expected an integer in [0, 10]"), std::string::npos);
}

// Only regular files are read: a directory, a FIFO (which would block) and a device (which
// would be read until memory runs out) are refused at once.
TEST(Checkpoint, OnlyRegularFilesAreRead) {
  const hayate::core::FileOrigin origin{{"in.yaml", 3, 5}, "checkpoint.restart"};
  const std::string dir = temp_file("a_directory");
  fs::create_directories(dir);
  std::string message = input_error([&] { CheckpointReader r(dir, origin); });
  EXPECT_NE(message.find("in.yaml:3:5: 'checkpoint.restart': checkpoint"), std::string::npos);
  EXPECT_NE(message.find("is a directory"), std::string::npos) << message;
  const std::string fifo = temp_file("a_fifo");
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  message = input_error([&] { CheckpointReader r(fifo, origin); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_NE(message.find("is not a regular file (a FIFO)"), std::string::npos) << message;
  message = input_error([&] { CheckpointReader r("/dev/zero", origin); });
  EXPECT_NE(message.find("is not a regular file (a character device)"), std::string::npos)
      << message;
  message = input_error([&] { CheckpointReader r(temp_file("missing.bin"), origin); });
  EXPECT_NE(message.find("cannot open the checkpoint (no such file)"), std::string::npos)
      << message;
}

// Messages echo at most ~80 characters of a value, with control bytes escaped.
TEST(Checkpoint, MessagesTruncateAndEscapeEchoedValues) {
  const std::string value = std::string(100000, 'x') + "\x1b[31m";
  EXPECT_LT(hayate::core::quoted(value).size(), 120u);
  EXPECT_NE(hayate::core::quoted(value).find("more bytes"), std::string::npos);
  EXPECT_EQ(hayate::core::echo("a\x1b[2Jb\nc"), "a\\x1b[2Jb\\nc");
  const hayate::core::Diagnostic d{{"f.yaml", 1, 2}, "bad \x07 value\nsecond line"};
  EXPECT_EQ(d.str(), "f.yaml:1:2: bad \\x07 value\nsecond line");
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

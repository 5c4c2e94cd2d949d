// Output safety of the writers themselves: series continued by a restart (rows up to the
// checkpoint's step kept, later ones dropped), killed runs' ".part" files continued, write
// errors reported at once with the file's name, failed runs keeping their complete records,
// and the output-folder lock.
#include "cli_runner.hpp"
#include "config/error.hpp"
#include "io/atomic_file.hpp"
#include "io/csv_writer.hpp"
#include "io/folder_lock.hpp"
#include "io/series_file.hpp"
#include "io/xyz.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;
using namespace hayate::core;

namespace {

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = hayate::test::scratch_path("safety_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

const std::vector<std::string> columns{"step", "value"};

// Rows for steps first..last (value = 10 * step).
void write_rows(CsvWriter& csv, std::int64_t first, std::int64_t last) {
  for (std::int64_t s = first; s <= last; ++s) csv.row({s, double(10 * s)});
}

}  // namespace

TEST(SeriesResume, KeepsRowsUpToTheStepAndDropsLaterOnes) {
  const fs::path dir = fresh_dir("resume");
  const std::string path = (dir / "t.csv").string();
  {
    RunOutputs outputs;
    CsvWriter csv(outputs, path, columns);
    write_rows(csv, 0, 9);
    outputs.commit();
  }
  const std::string straight = read_all(path);
  {
    // A restart from step 4: the rows 0..4 stay, 5..9 go, and the restarted run's own row for
    // step 4 is not written twice.
    RunOutputs outputs;
    CsvWriter csv(outputs, path, columns, 4);
    EXPECT_EQ(read_all(path), straight) << "nothing is touched before the first row";
    write_rows(csv, 4, 9);
    outputs.commit();
  }
  EXPECT_EQ(read_all(path), straight);
  EXPECT_FALSE(fs::exists(path + ".part"));
}

TEST(SeriesResume, ContinuesAKilledRunsPartFile) {
  // A killed run leaves "<name>.part" with a torn last row and an older final file from the
  // run before it; the restart continues the newer .part, without the torn row.
  const fs::path dir = fresh_dir("resume_part");
  const std::string path = (dir / "t.csv").string();
  write_text(path, "step,value\n0,0\n1,10\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  write_text(path + ".part", "step,value\n0,0\n1,10\n2,20\n3,30\n4,4");
  RunOutputs outputs;
  CsvWriter csv(outputs, path, columns, 6);
  write_rows(csv, 4, 5);
  outputs.commit();
  EXPECT_EQ(read_all(path), "step,value\n0,0\n1,10\n2,20\n3,30\n4,40\n5,50\n");
}

TEST(SeriesResume, RefusesASeriesOfOtherColumnsWithoutTouchingIt) {
  const fs::path dir = fresh_dir("resume_other");
  const std::string path = (dir / "t.csv").string();
  write_text(path, "step,other\n0,1\n");
  RunOutputs outputs;
  try {
    CsvWriter csv(outputs, path, columns, 0);
    FAIL() << "accepted a series of other columns";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.csv:1:1: the series to continue holds the columns "
                                         "'step,other', this run writes 'step,value'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(read_all(path), "step,other\n0,1\n");
}

TEST(SeriesResume, TrajectoryFramesUpToTheStep) {
  const fs::path dir = fresh_dir("resume_xyz");
  const std::string path = (dir / "d.xyz").string();
  const auto frame = [](std::int64_t step) {
    XyzFrame f;
    f.species = {"A"};
    f.columns = {{"pos", 3, {double(step), 0, 0}}};
    f.info = {{"step", std::to_string(step)}};
    return f;
  };
  {
    RunOutputs outputs;
    XyzWriter w(outputs, path);
    for (int s = 0; s <= 30; s += 10) w.write(frame(s));
    outputs.commit();
  }
  const std::string straight = read_all(path);
  // Killed after step 30's frame was half written, restarted from step 10.
  write_text(path + ".part", straight + "1\nstep=40\nA 4");
  RunOutputs outputs;
  XyzWriter w(outputs, path, 10);
  for (int s = 10; s <= 30; s += 10) w.write(frame(s));
  outputs.commit();
  EXPECT_EQ(read_all(path), straight);
  EXPECT_EQ(read_xyz(path, -1).column("pos")->values[0], 30);
}

TEST(SeriesFailure, AWriteErrorThrowsAtOnceNamingTheFile) {
  // "<name>.part" leading to /dev/full: every write fails with ENOSPC, as on a full disk.
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const fs::path dir = fresh_dir("enospc");
  const std::string path = (dir / "t.csv").string();
  fs::create_symlink("/dev/full", path + ".part");
  RunOutputs outputs;
  CsvWriter csv(outputs, path, columns);
  try {
    csv.row({std::int64_t{0}, 1.0});
    FAIL() << "a failed write went unnoticed";
  } catch (const RuntimeFailure& e) {
    EXPECT_NE(std::string(e.what()).find("t.csv"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("No space left on device"), std::string::npos) << e.what();
  }
}

TEST(SeriesFailure, AFailedRunKeepsItsCompleteRecords) {
  const fs::path dir = fresh_dir("keep");
  const std::string path = (dir / "t.csv").string();
  auto file = std::make_shared<SeriesFile>(path, false, "step,value\n");
  file->stream() << "0,1\n";
  file->end_record();
  file->stream() << "1,";  // a record the failure interrupted
  EXPECT_EQ(file->keep_written(), "");
  EXPECT_EQ(read_all(path), "step,value\n0,1\n");
  EXPECT_FALSE(fs::exists(path + ".part"));
}

TEST(SeriesFailure, AFolderInTheWayFailsWhenTheSeriesOpens) {
  const fs::path dir = fresh_dir("blocked");
  fs::create_directories(dir / "t.csv");
  RunOutputs outputs;
  try {
    CsvWriter csv(outputs, (dir / "t.csv").string(), columns);
    FAIL() << "a folder in the way was found only at the end";
  } catch (const RuntimeFailure& e) {
    EXPECT_NE(std::string(e.what()).find("t.csv': a folder of that name is in the way"),
              std::string::npos)
        << e.what();
  }
}

TEST(FolderLock, OneHolderAtATimeAndStaleLocksAreTakenOver) {
  const fs::path dir = fresh_dir("lock");
  {
    FolderLock first(dir.string(), "pid 1 on host h, input a.yaml");
    try {
      FolderLock second(dir.string(), "pid 2");
      FAIL() << "two holders";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(
                    "the output folder is in use by another run (pid 1 on host h, input a.yaml)"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_FALSE(fs::exists(dir / FolderLock::file_name()));
  // A lock file whose holder died (no lock held on it) is taken over.
  write_text(dir / FolderLock::file_name(), "pid 999999 on host gone\n");
  FolderLock again(dir.string(), "pid 3");
  EXPECT_EQ(read_all(dir / FolderLock::file_name()), "pid 3\n");
}

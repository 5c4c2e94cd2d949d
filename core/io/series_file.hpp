#pragma once
// Files that grow record by record over a run: time-series rows, trajectory frames, state
// dumps. Like every output they are written under "<name>.part" and renamed when the run
// commits them (RunOutputs); in addition
//  - each record reaches the operating system when it is complete, so a killed run leaves every
//    finished record in "<name>.part";
//  - a failed write throws RuntimeFailure naming the file at once, so a run stops at its first
//    write error;
//  - a failed run keeps its records: the file is cut after the last complete one and committed;
//  - a restarted run continues the file an earlier run left in the folder (the newer of
//    "<name>.part" and "<name>"): records up to the checkpoint's step are kept, later ones cut,
//    and nothing is touched before the first record of the new run is written.
#include <cstdint>
#include <fstream>
#include <functional>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hayate::core {

class SeriesFile {
 public:
  // Reads the file an earlier run left (from its start) and returns how many of its bytes to
  // keep: a prefix of whole records. May throw InputError when the file holds another series.
  using Keep = std::function<std::uint64_t(std::istream& in, const std::string& path)>;

  // A fresh file, or with `keep` the continuation of the earlier run's file. `header` starts a
  // file that keeps nothing. The file is opened (and the earlier one cut) at the first record.
  SeriesFile(std::string path, bool binary, std::string header, const Keep& keep = {});
  SeriesFile(const SeriesFile&) = delete;
  SeriesFile& operator=(const SeriesFile&) = delete;
  // Closes without renaming: what was flushed stays in "<name>.part", as after a kill.
  ~SeriesFile();

  const std::string& path() const { return path_; }
  // Bytes kept from the earlier run (0: the file starts afresh with its header).
  std::uint64_t kept() const { return kept_; }
  // The stream a record is written to; end_record() after each.
  std::ostream& stream();
  // Hands the record to the operating system; throws RuntimeFailure naming the file on failure.
  void end_record();
  // Renames to the final name; throws RuntimeFailure naming the file on failure.
  void commit();
  // For a failed run: cuts an incomplete last record and commits. Returns the failure message,
  // empty on success; never throws.
  std::string keep_written() noexcept;

 private:
  void open();

  std::string path_;
  bool binary_ = false;
  std::string header_;
  std::string source_;      // the earlier run's file to continue ("" = none)
  std::uint64_t kept_ = 0;  // bytes of source_ kept
  bool opened_ = false, committed_ = false;
  std::uint64_t complete_ = 0;  // bytes of whole records written so far
  std::ofstream out_;
};

// The series files of one run. Problems open their series here; the driver commits them all
// after the last step, and after a failure keeps what each holds.
class RunOutputs {
 public:
  std::shared_ptr<SeriesFile> open(const std::string& path, bool binary, std::string header,
                                   const SeriesFile::Keep& keep = {});
  // Throws the first failure.
  void commit();
  // Commits what each file holds; returns the failures (never throws).
  std::vector<std::string> keep_written() noexcept;

 private:
  std::vector<std::shared_ptr<SeriesFile>> files_;
};

}  // namespace hayate::core

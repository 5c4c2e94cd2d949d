#pragma once
// Whole files (run.yaml, checkpoints, timers, pictures, per-snapshot tables) are written under
// "<name>.part" and renamed to their final name by an explicit commit, so a reader never sees
// half a file. A write that fails throws RuntimeFailure naming the file and the system's reason;
// a file destroyed without a commit is removed: a half-written file never takes a final name.
// Files that grow over a run (time series, trajectories) are SeriesFile (series_file.hpp).
#include <fstream>
#include <string>

namespace hayate::core {

class AtomicFile {
 public:
  AtomicFile() = default;
  explicit AtomicFile(std::string path, bool binary = false);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&& other) noexcept;
  // Uncommitted: the ".part" file is removed (the failure that skipped the commit is reported).
  ~AtomicFile();

  std::ostream& stream() { return out_; }
  bool is_open() const { return out_.is_open(); }
  const std::string& path() const { return path_; }
  // Flushes, closes and renames to the final name. Throws RuntimeFailure on I/O failure.
  void commit();

 private:
  void discard() noexcept;

  std::string path_;
  std::ofstream out_;
};

// Writes a whole file at once through AtomicFile.
void write_file_atomic(const std::string& path, const std::string& contents);

// Waits until a written file (or a folder's entries: renames, new names) is on the disk: before
// removing what a newer file replaces. Throws RuntimeFailure naming the path on failure.
void sync_to_disk(const std::string& path);

// Creates a folder and its parents; throws RuntimeFailure naming the path on failure. Returns
// whether the folder itself was created (false: it existed).
bool make_directories(const std::string& path);

// "cannot write 'PATH': REASON" as a RuntimeFailure; `error` is an errno value (0: unknown).
[[noreturn]] void throw_write_error(const std::string& path, int error);

// Throws RuntimeFailure when `path` (a final output name) is taken by a folder or another
// non-file, which a rename at the end of the run could not replace.
void check_output_name(const std::string& path);

}  // namespace hayate::core

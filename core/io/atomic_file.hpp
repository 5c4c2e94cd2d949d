#pragma once
// Files are written under "<name>.part" and renamed to their final name when complete, so a
// reader never sees half a file; a run that fails still commits what it wrote.
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
  // Commits what was written: a file is never silently lost.
  ~AtomicFile();

  std::ostream& stream() { return out_; }
  bool is_open() const { return out_.is_open(); }
  const std::string& path() const { return path_; }
  // Flushes, closes and renames to the final name. Throws std::runtime_error on I/O failure.
  void commit();

 private:
  std::string path_;
  std::ofstream out_;
};

// Writes a whole file at once through AtomicFile.
void write_file_atomic(const std::string& path, const std::string& contents);

// Creates a folder and its parents; throws std::runtime_error naming the path on failure.
void make_directories(const std::string& path);

}  // namespace hayate::core

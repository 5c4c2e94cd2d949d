#pragma once
// One run per output folder: a run holds an exclusive lock on "<folder>/.hayate-lock" (flock)
// while it writes there. The lock file names its holder; the kernel drops the lock when the
// holder ends in any way (kill -9 included), so a lock left by a dead run is simply taken over.
#include <string>

namespace hayate::core {

class FolderLock {
 public:
  FolderLock() = default;
  // Takes the folder's lock, describing this run as `holder` in the lock file. Throws InputError
  // (at the folder) naming the holder when another run has it, RuntimeFailure when the lock
  // file cannot be written.
  FolderLock(const std::string& folder, const std::string& holder);
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;
  FolderLock(FolderLock&& other) noexcept;
  FolderLock& operator=(FolderLock&& other) noexcept;
  // Removes the lock file and releases the lock.
  ~FolderLock();

  static const char* file_name() { return ".hayate-lock"; }

 private:
  void release() noexcept;

  std::string path_;
  int fd_ = -1;
};

// "pid P on host H": this process, for a FolderLock's holder text.
std::string this_process();

}  // namespace hayate::core

#include "io/folder_lock.hpp"

#include "config/error.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace hayate::core {

std::string this_process() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "unknown");
  return "pid " + std::to_string(getpid()) + " on host " + host;
}

namespace {

std::string read_holder(int fd) {
  std::string text(512, '\0');
  const ssize_t n = pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? std::size_t(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return text.empty() ? "a run that has not yet named itself" : text;
}

}  // namespace

FolderLock::FolderLock(const std::string& folder, const std::string& holder)
    : path_(folder + "/" + file_name()) {
  // A holder that ends removes the file while holding the lock; if that happened between our
  // open and our flock, we locked a removed file: try again with the new one.
  for (;;) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw RuntimeFailure("cannot create the lock file '" + path_ + "': " + std::strerror(errno));
    if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      const std::string who = read_holder(fd_);
      ::close(fd_);
      fd_ = -1;
      if (error == EWOULDBLOCK)
        throw InputError(SourceLocation{folder, 0, 0},
                         "the output folder is in use by another run (" + who +
                             "); wait for it to end or choose another folder (--output)");
      throw RuntimeFailure("cannot lock '" + path_ + "': " + std::strerror(error));
    }
    struct stat held {
    }, named{};
    if (fstat(fd_, &held) == 0 && stat(path_.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
        held.st_dev == named.st_dev)
      break;
    ::close(fd_);
    fd_ = -1;
  }
  const std::string text = holder + "\n";
  if (ftruncate(fd_, 0) != 0 || pwrite(fd_, text.data(), text.size(), 0) != ssize_t(text.size())) {
    const int error = errno;
    release();
    throw RuntimeFailure("cannot write the lock file '" + path_ + "': " + std::strerror(error));
  }
}

FolderLock::FolderLock(FolderLock&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

FolderLock& FolderLock::operator=(FolderLock&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

FolderLock::~FolderLock() {
  release();
}

void FolderLock::release() noexcept {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

}  // namespace hayate::core

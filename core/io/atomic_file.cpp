#include "io/atomic_file.hpp"

#include "config/error.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <unistd.h>

namespace hayate::core {

namespace {
std::string part_name(const std::string& path) {
  return path + ".part";
}
}  // namespace

void throw_write_error(const std::string& path, int error) {
  throw RuntimeFailure("cannot write '" + path +
                       "': " + (error != 0 ? std::strerror(error) : "the write failed"));
}

void check_output_name(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(path, ec);
  if (ec || !std::filesystem::exists(status)) return;
  if (std::filesystem::is_directory(status))
    throw RuntimeFailure("cannot write '" + path + "': a folder of that name is in the way");
  if (!std::filesystem::is_regular_file(status) && !std::filesystem::is_symlink(status))
    throw RuntimeFailure("cannot write '" + path + "': it exists and is not a regular file");
}

AtomicFile::AtomicFile(std::string path, bool binary) : path_(std::move(path)) {
  check_output_name(path_);
  errno = 0;
  out_.open(part_name(path_), binary ? std::ios::out | std::ios::binary | std::ios::trunc
                                     : std::ios::out | std::ios::trunc);
  if (!out_) throw_write_error(part_name(path_), errno);
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)), out_(std::move(other.out_)) {
  other.path_.clear();
}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
  if (this != &other) {
    discard();
    path_ = std::move(other.path_);
    out_ = std::move(other.out_);
    other.path_.clear();
  }
  return *this;
}

AtomicFile::~AtomicFile() {
  discard();
}

void AtomicFile::discard() noexcept {
  if (!out_.is_open()) return;
  out_.close();
  std::remove(part_name(path_).c_str());
}

void AtomicFile::commit() {
  if (!out_.is_open()) return;
  errno = 0;
  out_.flush();
  if (!out_) {
    const int error = errno;
    discard();
    throw_write_error(path_, error);
  }
  out_.close();
  if (!out_) throw_write_error(path_, errno);
  if (std::rename(part_name(path_).c_str(), path_.c_str()) != 0) {
    const int error = errno;
    std::remove(part_name(path_).c_str());
    throw RuntimeFailure("cannot rename '" + part_name(path_) + "' to '" + path_ +
                         "': " + std::strerror(error));
  }
}

void write_file_atomic(const std::string& path, const std::string& contents) {
  AtomicFile file(path, true);
  file.stream() << contents;
  file.commit();
}

void sync_to_disk(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw_write_error(path, errno);
  const int failed = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  // A folder on a file system that cannot sync folders: its entries are as durable as it makes
  // them.
  if (failed != 0 && error != EINVAL && error != EBADF) throw_write_error(path, error);
}

bool make_directories(const std::string& path) {
  std::error_code ec;
  const bool created = std::filesystem::create_directories(path, ec);
  if (ec) throw RuntimeFailure("cannot create folder '" + path + "': " + ec.message());
  return created;
}

}  // namespace hayate::core

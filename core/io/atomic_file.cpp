#include "io/atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace hayate::core {

namespace {
std::string part_name(const std::string& path) {
  return path + ".part";
}
}  // namespace

AtomicFile::AtomicFile(std::string path, bool binary) : path_(std::move(path)) {
  out_.open(part_name(path_), binary ? std::ios::out | std::ios::binary | std::ios::trunc
                                     : std::ios::out | std::ios::trunc);
  if (!out_) {
    throw std::runtime_error("cannot write '" + part_name(path_) + "': " + std::strerror(errno));
  }
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)), out_(std::move(other.out_)) {
  other.path_.clear();
}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
  if (this != &other) {
    try {
      commit();
    } catch (...) {
    }
    path_ = std::move(other.path_);
    out_ = std::move(other.out_);
    other.path_.clear();
  }
  return *this;
}

AtomicFile::~AtomicFile() {
  try {
    commit();
  } catch (...) {
    // Destructors must not throw; the ".part" file stays on disk with everything written.
  }
}

void AtomicFile::commit() {
  if (!out_.is_open()) return;
  out_.flush();
  const bool ok = static_cast<bool>(out_);
  out_.close();
  if (!ok) throw std::runtime_error("write error on '" + part_name(path_) + "'");
  if (std::rename(part_name(path_).c_str(), path_.c_str()) != 0) {
    throw std::runtime_error("cannot rename '" + part_name(path_) + "' to '" + path_ +
                             "': " + std::strerror(errno));
  }
}

void write_file_atomic(const std::string& path, const std::string& contents) {
  AtomicFile file(path, true);
  file.stream() << contents;
  file.commit();
}

void make_directories(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw std::runtime_error("cannot create folder '" + path + "': " + ec.message());
}

}  // namespace hayate::core

#include "io/input_file.hpp"

#include "config/error.hpp"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace hayate::core {
namespace {

[[noreturn]] void refuse(const std::string& path, const std::string& message) {
  throw InputError(SourceLocation{path, 0, 0}, message);
}

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Opens without blocking (a FIFO with no writer would block a plain open) and checks the kind
// and size on the open descriptor, so what is checked is what is read.
int open_checked(const std::string& path, const std::string& what, std::uintmax_t max_bytes,
                 std::uintmax_t& size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) refuse(path, fmt::format("cannot open {}: {}", what, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    refuse(path, fmt::format("cannot read {}: {}", what, std::strerror(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    refuse(path, fmt::format("{} is {}, not a regular file", what, kind_of(st.st_mode)));
  }
  size = static_cast<std::uintmax_t>(st.st_size);
  if (size > max_bytes) {
    ::close(fd);
    refuse(path, fmt::format("{} has {} bytes, more than the {} accepted", what, size, max_bytes));
  }
  return fd;
}

}  // namespace

std::uintmax_t check_input_file(const std::string& path, const std::string& what,
                                std::uintmax_t max_bytes) {
  std::uintmax_t size = 0;
  ::close(open_checked(path, what, max_bytes, size));
  return size;
}

std::string read_input_file(const std::string& path, const std::string& what,
                            std::uintmax_t max_bytes) {
  std::uintmax_t size = 0;
  const int fd = open_checked(path, what, max_bytes, size);
  std::string text(static_cast<std::size_t>(size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, &text[got], text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      refuse(path, fmt::format("cannot read {}: {}", what, std::strerror(err)));
    }
    if (n == 0) break;  // the file shrank while it was read: what is there is what it holds
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  text.resize(got);
  return text;
}

SourceLocation yaml_error_location(const std::string& file, const YAML::Mark& mark) {
  if (mark.line < 0) return SourceLocation{file, 1, 1};
  return SourceLocation{file, mark.line + 1, mark.column + 1};
}

std::string yaml_error_text(const YAML::Exception& e) {
  if (const auto* deep = dynamic_cast<const YAML::DeepRecursion*>(&e))
    return fmt::format("collections nested {} levels deep, more than the parser accepts",
                       deep->depth());
  return e.msg;
}

bool path_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace hayate::core

#include "io/input_file.hpp"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace hayate::core {
namespace {

std::string kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

// "a checkpoint", "an input file".
std::string a_or_an(const std::string& what) {
  const bool vowel = !what.empty() && std::string("aeiou").find(what[0]) != std::string::npos;
  return (vowel ? "an " : "a ") + what;
}

// Opens without blocking (a FIFO with no writer would block a plain open) and checks the kind
// and size on the open descriptor, so what is checked is what is read.
int open_checked(const std::string& path, const std::string& what, std::uint64_t max_bytes,
                 const FileOrigin& origin, std::uint64_t& size) {
  if (path.empty()) fail_file(path, what, "no file name given", origin);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    fail_file(path, what,
              e == ENOENT ? "cannot open the " + what + " (no such file)"
                          : "cannot open the " + what + " (" + std::strerror(e) + ")",
              origin);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    fail_file(path, what, "cannot read the " + what + " (" + std::strerror(e) + ")", origin);
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    fail_file(path, what, "is a directory, not " + a_or_an(what), origin);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail_file(path, what,
              "is not a regular file (" + kind_of(st.st_mode) + "); give a regular " + what,
              origin);
  }
  size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes) {
    ::close(fd);
    fail_file(
        path, what,
        fmt::format("is {} bytes, more than the {} {} may have", size, max_bytes, a_or_an(what)),
        origin);
  }
  return fd;
}

}  // namespace

void fail_file(const std::string& path, const std::string& what, const std::string& message,
               const FileOrigin& origin) {
  if (origin.empty()) throw InputError(SourceLocation{path, 0, 0}, message);
  std::string text = origin.key.empty() ? std::string() : quoted(origin.key) + ": ";
  text += what + " " + quoted(path, 4 * echo_limit) + ": " + message;
  throw InputError(origin.where, text);
}

std::uint64_t check_input_file(const std::string& path, const std::string& what,
                               std::uint64_t max_bytes, const FileOrigin& origin) {
  std::uint64_t size = 0;
  ::close(open_checked(path, what, max_bytes, origin, size));
  return size;
}

std::string read_input_file(const std::string& path, const std::string& what,
                            std::uint64_t max_bytes, const FileOrigin& origin) {
  std::uint64_t size = 0;
  const int fd = open_checked(path, what, max_bytes, origin, size);
  std::string text(static_cast<std::size_t>(size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, &text[got], text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      fail_file(path, what, "cannot read the " + what + " (" + std::strerror(e) + ")", origin);
    }
    if (n == 0) break;  // the file shrank while it was read: what is there is what it holds
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  text.resize(got);
  return text;
}

bool path_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
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

}  // namespace hayate::core

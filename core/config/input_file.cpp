#include "config/input_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace hayate::core {

void fail_file(const std::string& path, const std::string& what, const std::string& message,
               const FileOrigin& origin) {
  if (origin.empty()) throw InputError(SourceLocation{path, 0, 0}, message);
  std::string text = origin.key.empty() ? std::string() : quoted(origin.key) + ": ";
  text += what + " " + quoted(path, 4 * echo_limit) + ": " + message;
  throw InputError(origin.where, text);
}

std::uint64_t require_regular_file(const std::string& path, const std::string& what,
                                   std::uint64_t max_bytes, const FileOrigin& origin) {
  if (path.empty()) fail_file(path, what, "no file name given", origin);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    fail_file(path, what,
              e == ENOENT ? "cannot open the " + what + " (no such file)"
                          : "cannot open the " + what + " (" + std::strerror(e) + ")",
              origin);
  }
  if (S_ISDIR(st.st_mode)) fail_file(path, what, "is a directory, not a " + what, origin);
  if (!S_ISREG(st.st_mode))
    fail_file(path, what,
              std::string("is not a regular file (") +
                  (S_ISFIFO(st.st_mode)   ? "a FIFO"
                   : S_ISCHR(st.st_mode)  ? "a character device"
                   : S_ISBLK(st.st_mode)  ? "a block device"
                   : S_ISSOCK(st.st_mode) ? "a socket"
                                          : "a special file") +
                  "); give a regular " + what,
              origin);
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes)
    fail_file(path, what,
              "is " + std::to_string(size) + " bytes, more than the " + std::to_string(max_bytes) +
                  " a " + what + " may have",
              origin);
  return size;
}

std::string read_regular_file(const std::string& path, const std::string& what,
                              std::uint64_t max_bytes, const FileOrigin& origin) {
  const std::uint64_t size = require_regular_file(path, what, max_bytes, origin);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_file(path, what, "cannot open the " + what, origin);
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  // A file that shrank since stat() is read as far as it goes; one that grew, up to its size.
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (in.bad()) fail_file(path, what, "read error", origin);
  return text;
}

}  // namespace hayate::core

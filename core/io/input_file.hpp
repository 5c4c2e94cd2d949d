#pragma once
// Files a run reads (inputs, model files, particle and data files, masks): regular files only,
// of bounded size, opened without ever blocking. A FIFO, a device (/dev/zero, /dev/urandom) or
// a directory where a file is expected is an input error, not an endless read or a hang.
#include "config/config.hpp"

#include <cstdint>
#include <string>
#include <utility>

namespace hayate::core {

// Size limits by kind of file: far above any real input, far below what would exhaust memory.
inline constexpr std::uintmax_t kMaxTextInputBytes = std::uintmax_t(16) << 20;      // YAML, models
inline constexpr std::uintmax_t kMaxDataFileBytes = (std::uintmax_t(1) << 31) - 1;  // particles

// Checks that `path` is a regular file of at most `max_bytes` bytes and returns its size.
// Throws InputError at `path` (no line) saying what is wrong; `what` names the file's role in
// the message ("the model file").
std::uintmax_t check_input_file(const std::string& path, const std::string& what,
                                std::uintmax_t max_bytes);

// The whole contents of a file that check_input_file accepts.
std::string read_input_file(const std::string& path, const std::string& what,
                            std::uintmax_t max_bytes);

// Whether something exists at `path` (a stat, so a FIFO is not opened).
bool path_exists(const std::string& path);

// Where a yaml-cpp exception points (1-based; the first character when it has no mark) and what
// it says: yaml-cpp reports nesting beyond its depth limit as "bad file", which says nothing.
SourceLocation yaml_error_location(const std::string& file, const YAML::Mark& mark);
std::string yaml_error_text(const YAML::Exception& e);

// Runs `read()` on the file that the input key `key` names. An error about the file as a whole
// (it cannot be opened, is not a regular file, is too large: no line of its own) is reported at
// the key, naming the file; an error inside the file keeps its own file:line:col.
template <class Read>
auto read_named_file(const Config& config, const std::string& key, Read&& read) {
  try {
    return std::forward<Read>(read)();
  } catch (const InputError& e) {
    const auto& d = e.diagnostics();
    if (d.size() != 1 || d.front().where.line > 0) throw;
    config.fail(key, d.front().where.file + ": " + d.front().message);
  }
}

}  // namespace hayate::core

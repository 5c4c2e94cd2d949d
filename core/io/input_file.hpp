#pragma once
// Files a run reads (inputs, model files, checkpoints, particle and data files, masks) are read
// only when they are regular files of a bounded size, opened without ever blocking: a FIFO would
// block the run, a device such as /dev/zero would be read until memory runs out, and a directory
// gives an unhelpful stream error. Every refusal is an InputError (exit 2) at the position that
// named the file: the input key (FileOrigin) or, for the input file itself, the path.
#include "config/error.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <utility>

namespace hayate::core {

// Size limits by kind of file: far above any real file of the kind, far below what would exhaust
// memory. A YAML input or model file past 16 MiB is not a hand-written or generated description.
inline constexpr std::uint64_t max_input_file_bytes = std::uint64_t(16) << 20;   // inputs, models
inline constexpr std::uint64_t max_image_file_bytes = std::uint64_t(256) << 20;  // PGM/PNG masks
inline constexpr std::uint64_t max_data_file_bytes =
    (std::uint64_t(1) << 31) - 1;                                                // XYZ, CSV, data
inline constexpr std::uint64_t max_checkpoint_bytes = std::uint64_t(256) << 30;  // checkpoints

// Where a file was named: `where` is the position of the input key (or --set argument) that
// named it; empty when the path itself is the position (the input file on the command line, a
// reader called on a path).
struct FileOrigin {
  SourceLocation where;
  std::string key;  // the input key, e.g. "checkpoint.restart"; empty: none

  bool empty() const { return where.file.empty(); }
};

// Fails unless `path` is a regular file of at most `max_bytes`; returns its size. `what` names
// the kind of file in messages ("checkpoint", "model file").
std::uint64_t check_input_file(const std::string& path, const std::string& what,
                               std::uint64_t max_bytes, const FileOrigin& origin = {});

// The whole contents of such a file, read from the descriptor that was checked.
std::string read_input_file(const std::string& path, const std::string& what,
                            std::uint64_t max_bytes, const FileOrigin& origin = {});

// An InputError about `path`: at the origin ("input.yaml:4:3: 'key': <what> 'path': message")
// when there is one, else at the path ("path: message").
[[noreturn]] void fail_file(const std::string& path, const std::string& what,
                            const std::string& message, const FileOrigin& origin = {});

// Runs `read()`, a reader of the file at `path` that `origin` named. An error about the file as a
// whole (no line of its own: it holds too few particles, it cannot be opened) is reported at the
// origin, naming the file; an error inside the file keeps its own file:line:col.
template <class Read>
auto read_named_file(const FileOrigin& origin, const std::string& path, const std::string& what,
                     Read&& read) {
  try {
    return std::forward<Read>(read)();
  } catch (const InputError& e) {
    const auto& d = e.diagnostics();
    if (origin.empty() || d.size() != 1 || d.front().where.line > 0) throw;
    fail_file(path, what, d.front().message, origin);
  }
}

// Whether something exists at `path` (a stat, so a FIFO is not opened).
bool path_exists(const std::string& path);

// Where a yaml-cpp exception points (1-based; the first character when it has no mark) and what
// it says: yaml-cpp reports nesting beyond its depth limit as "bad file", which says nothing.
SourceLocation yaml_error_location(const std::string& file, const YAML::Mark& mark);
std::string yaml_error_text(const YAML::Exception& e);

}  // namespace hayate::core

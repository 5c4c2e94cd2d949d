#pragma once
// Files a run reads (inputs, model files, checkpoints, particle and data files, masks) are read
// only when they are regular files of a bounded size: a FIFO would block the run, a device such
// as /dev/zero would be read until memory runs out, and a directory gives an unhelpful stream
// error. Every refusal is an InputError (exit 2) at the position that named the file.
#include "config/error.hpp"

#include <cstdint>
#include <string>

namespace hayate::core {

// Size limits by kind of file. A YAML input or model file past these sizes is not a hand-written
// or generated description; data files and checkpoints are bounded by what a machine can hold.
inline constexpr std::uint64_t max_input_file_bytes = std::uint64_t(16) << 20;   // run inputs
inline constexpr std::uint64_t max_model_file_bytes = std::uint64_t(64) << 20;   // ODE models
inline constexpr std::uint64_t max_image_file_bytes = std::uint64_t(256) << 20;  // PGM/PNG masks
inline constexpr std::uint64_t max_data_file_bytes = std::uint64_t(64) << 30;    // XYZ, CSV, data
inline constexpr std::uint64_t max_checkpoint_bytes = std::uint64_t(256) << 30;  // checkpoints

// Where a file was named: `where` is the position of the input key (or --set argument) that
// named it; empty when the path itself is the position (the input file on the command line).
struct FileOrigin {
  SourceLocation where;
  std::string key;  // the input key, e.g. "checkpoint.restart"; empty: none

  bool empty() const { return where.file.empty(); }
};

// Fails unless `path` is a regular file of at most `max_bytes`; returns its size. `what` names
// the kind of file in messages ("checkpoint", "model file").
std::uint64_t require_regular_file(const std::string& path, const std::string& what,
                                   std::uint64_t max_bytes, const FileOrigin& origin = {});

// The whole contents of such a file.
std::string read_regular_file(const std::string& path, const std::string& what,
                              std::uint64_t max_bytes, const FileOrigin& origin = {});

// An InputError about `path`: at the origin ("input.yaml:4:3: 'key': <what> 'path': message")
// when there is one, else at the path ("path: message").
[[noreturn]] void fail_file(const std::string& path, const std::string& what,
                            const std::string& message, const FileOrigin& origin = {});

}  // namespace hayate::core

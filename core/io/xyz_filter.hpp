#pragma once
// Reading part of a frame of an extended XYZ file: several ranks each keep the particles of
// their sub-box, none holding the whole frame.
#include "io/xyz.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace hayate::core {

struct XyzFilter {
  // Called once the chosen frame's count and comment line are read: its box and columns, no
  // particles yet.
  std::function<void(const XyzFrame& header, std::size_t count)> frame;
  // Called for each particle of the chosen frame, in order, with its species and its values
  // (every real column's components, in column order). A particle it refuses is read and
  // checked but not stored.
  std::function<bool(std::size_t index, const std::string& species, const double* values)> keep;
};

// Frame `index` (0 = first, -1 = last) of an extended XYZ file holding only the particles
// `filter` keeps; `rows` gets each kept particle's index in the frame. Every frame up to the
// chosen one is read and checked as read_xyz does (-1: a first pass counts the frames by their
// count lines, without parsing particles).
XyzFrame read_xyz(const std::string& path, int index, const XyzFilter& filter,
                  std::vector<std::size_t>& rows);

}  // namespace hayate::core

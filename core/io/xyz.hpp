#pragma once
// Extended XYZ (as read by OVITO and ASE): a count line, a comment line with key=value pairs
// (Lattice, Properties, Time, ...), then one line per particle.
#include "io/series_file.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hayate::core {

struct XyzColumn {
  std::string name;  // "pos", "velo", "mass", ...
  int components = 1;
  std::vector<double> values;  // n * components, particle-major
};

struct XyzFrame {
  std::vector<std::string> species;                       // one per particle
  std::vector<XyzColumn> columns;                         // real-valued properties
  std::optional<std::array<double, 3>> box;               // orthogonal periodic box lengths
  std::vector<std::pair<std::string, std::string>> info;  // extra comment-line pairs

  std::size_t size() const { return species.size(); }
  const XyzColumn* column(const std::string& name) const;
};

// A trajectory: a series of frames in `outputs`, each on disk when write() returns. A frame's
// step is its "step" (or "Step") comment pair. With `resume_after` (a restart from that step) it
// continues the file an earlier run left: frames up to that step kept, later ones dropped, and
// frames of steps the file already holds skipped.
class XyzWriter {
 public:
  XyzWriter() = default;
  XyzWriter(RunOutputs& outputs, const std::string& path,
            std::optional<std::int64_t> resume_after = {});
  bool is_open() const { return file_ != nullptr; }
  // Throws RuntimeFailure naming the file when the write fails.
  void write(const XyzFrame& frame);

 private:
  std::shared_ptr<SeriesFile> file_;
  std::optional<std::int64_t> last_kept_;
};

// Reads frame `index` (0 = first, -1 = last) of an extended XYZ file. Malformed content raises
// InputError at the offending line and column.
XyzFrame read_xyz(const std::string& path, int index = 0);

}  // namespace hayate::core

#pragma once
// Extended XYZ (as read by OVITO and ASE): a count line, a comment line with key=value pairs
// (Lattice, Properties, Time, ...), then one line per particle.
#include "io/atomic_file.hpp"

#include <array>
#include <map>
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

class XyzWriter {
 public:
  XyzWriter() = default;
  explicit XyzWriter(const std::string& path) : file_(path) {}
  bool is_open() const { return file_.is_open(); }
  void write(const XyzFrame& frame);
  void commit() { file_.commit(); }

 private:
  AtomicFile file_;
};

// Reads frame `index` (0 = first, -1 = last) of an extended XYZ file. Malformed content raises
// InputError at the offending line and column.
XyzFrame read_xyz(const std::string& path, int index = 0);

}  // namespace hayate::core

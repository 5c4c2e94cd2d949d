#include "io/xyz.hpp"

#include "io/xyz_filter.hpp"

#include "config/error.hpp"
#include "io/input_file.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

namespace hayate::core {

const XyzColumn* XyzFrame::column(const std::string& name) const {
  for (const auto& c : columns)
    if (c.name == name) return &c;
  return nullptr;
}

namespace {

// The step a frame's comment pairs name ("step" in any case); none when absent or not a number.
template <class Pairs>
std::optional<std::int64_t> frame_step(const Pairs& pairs) {
  for (const auto& [key, value] : pairs) {
    if (key.size() != 4) continue;
    std::string lower = key;
    for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (lower != "step") continue;
    std::int64_t step = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), step);
    if (ec == std::errc() && ptr == value.data() + value.size()) return step;
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> parse_comment(const std::string& line,
                                                               const std::string& path,
                                                               int line_no);

// Reads an earlier run's trajectory: the bytes of its whole frames up to step `after`,
// stopping at the first frame that is later, incomplete (a killed run) or malformed.
std::uint64_t keep_frames(std::istream& in, const std::string& path, std::int64_t after,
                          std::optional<std::int64_t>& last) {
  std::uint64_t kept = 0, offset = 0;
  std::string line;
  const auto next = [&] {
    if (!std::getline(in, line) || in.eof()) return false;
    offset += line.size() + 1;
    return true;
  };
  while (next()) {
    std::int64_t n = 0;
    const auto [ptr, ec] = std::from_chars(line.data(), line.data() + line.size(), n);
    if (ec != std::errc() || ptr != line.data() + line.size() || n < 0 || !next()) break;
    std::optional<std::int64_t> step;
    try {
      step = frame_step(parse_comment(line, path, 0));
    } catch (const InputError&) {
    }
    if (!step || *step > after) break;
    std::int64_t read = 0;
    while (read < n && next()) ++read;
    if (read < n) break;
    kept = offset;
    last = step;
  }
  return kept;
}

}  // namespace

XyzWriter::XyzWriter(RunOutputs& outputs, const std::string& path,
                     std::optional<std::int64_t> resume_after) {
  SeriesFile::Keep keep;
  if (resume_after)
    keep = [&](std::istream& in, const std::string& source) {
      return keep_frames(in, source, *resume_after, last_kept_);
    };
  file_ = outputs.open(path, false, "", keep);
  if (file_->kept() == 0) last_kept_.reset();
}

void XyzWriter::write(const XyzFrame& f) {
  if (last_kept_) {
    const auto step = frame_step(f.info);
    if (step && *step <= *last_kept_) return;
  }
  const std::size_t n = f.size();
  for (const auto& c : f.columns) {
    if (c.values.size() != n * static_cast<std::size_t>(c.components))
      throw std::logic_error("xyz column '" + c.name + "' has the wrong size");
  }
  std::string header;
  if (f.box) {
    header += fmt::format("Lattice=\"{} 0 0 0 {} 0 0 0 {}\" pbc=\"T T T\" ", (*f.box)[0],
                          (*f.box)[1], (*f.box)[2]);
  }
  header += "Properties=species:S:1";
  for (const auto& c : f.columns) header += fmt::format(":{}:R:{}", c.name, c.components);
  for (const auto& [key, value] : f.info) header += " " + key + "=" + value;
  auto& out = file_->stream();
  out << n << '\n' << header << '\n';
  std::string line;
  for (std::size_t i = 0; i < n; ++i) {
    line = f.species[i];
    for (const auto& c : f.columns)
      for (int k = 0; k < c.components; ++k)
        line += fmt::format(" {}", c.values[i * c.components + k]);
    out << line << '\n';
  }
  file_->end_record();
}

namespace {

// Splits "k=v k2="a b c"" into pairs; values may be double-quoted.
std::vector<std::pair<std::string, std::string>> parse_comment(const std::string& line,
                                                               const std::string& path,
                                                               int line_no) {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i >= line.size()) break;
    const std::size_t key_start = i;
    while (i < line.size() && line[i] != '=' && line[i] != ' ') ++i;
    std::string key = line.substr(key_start, i - key_start);
    std::string value;
    if (i < line.size() && line[i] == '=') {
      ++i;
      if (i < line.size() && line[i] == '"') {
        const std::size_t close = line.find('"', i + 1);
        if (close == std::string::npos)
          throw InputError(SourceLocation{path, line_no, static_cast<int>(i) + 1},
                           "unterminated quoted value in the comment line");
        value = line.substr(i + 1, close - i - 1);
        i = close + 1;
      } else {
        const std::size_t start = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
        value = line.substr(start, i - start);
      }
    }
    pairs.emplace_back(std::move(key), std::move(value));
  }
  return pairs;
}

}  // namespace

namespace {

// Reads the file up to frame `index` (-1: to its end). Without a filter, frame `index` (-1: the
// last) is returned whole. With one, frame `index` (>= 0) is filtered and every frame before it
// only checked.
XyzFrame read_frames(const std::string& path, int index, const XyzFilter* filter,
                     std::vector<std::size_t>* rows) {
  check_input_file(path, "particle file", max_data_file_bytes);
  std::ifstream in(path);
  if (!in) throw InputError(SourceLocation{path, 0, 0}, "cannot open the particle file");
  std::string line;
  int line_no = 0;
  XyzFrame frame;
  int frame_no = 0;
  bool have = false;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::size_t n = 0;
    try {
      std::size_t used = 0;
      const long long v = std::stoll(line, &used);
      if (v < 0 || line.find_first_not_of(" \t\r", used) != std::string::npos) throw 0;
      n = static_cast<std::size_t>(v);
    } catch (...) {
      throw InputError(SourceLocation{path, line_no, 1}, "expected the particle count of a frame");
    }
    if (!std::getline(in, line))
      throw InputError(SourceLocation{path, line_no + 1, 1}, "missing comment line");
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    XyzFrame f;
    struct Prop {
      std::string name;
      char type;
      int count;
    };
    std::vector<Prop> props{{"species", 'S', 1}, {"pos", 'R', 3}};
    for (auto& [key, value] : parse_comment(line, path, line_no)) {
      if (key == "Properties") {
        props.clear();
        std::vector<std::string> parts;
        std::stringstream ss(value);
        std::string part;
        while (std::getline(ss, part, ':')) parts.push_back(part);
        if (parts.size() % 3 != 0)
          throw InputError(SourceLocation{path, line_no, 1},
                           "Properties must be name:type:count triples, got '" + value + "'");
        for (std::size_t p = 0; p < parts.size(); p += 3) {
          int count = 0;
          try {
            count = std::stoi(parts[p + 2]);
          } catch (...) {
          }
          const char type = parts[p + 1].empty() ? '?' : parts[p + 1][0];
          if (count < 1 || (type != 'S' && type != 'R' && type != 'I'))
            throw InputError(SourceLocation{path, line_no, 1},
                             "bad property '" + parts[p] + ":" + parts[p + 1] + ":" + parts[p + 2] +
                                 "' (type S, R or I, count >= 1)");
          props.push_back({parts[p], type, count});
        }
      } else if (key == "Lattice") {
        std::stringstream ss(value);
        std::array<double, 9> m{};
        for (auto& x : m)
          if (!(ss >> x))
            throw InputError(SourceLocation{path, line_no, 1}, "Lattice needs 9 numbers");
        if (m[1] != 0 || m[2] != 0 || m[3] != 0 || m[5] != 0 || m[6] != 0 || m[7] != 0)
          throw InputError(SourceLocation{path, line_no, 1},
                           "only orthogonal (diagonal) lattices are supported");
        f.box = std::array<double, 3>{m[0], m[4], m[8]};
      } else {
        f.info.emplace_back(key, value);
      }
    }
    // The first string property is the species (one per particle whatever its count); other
    // string properties are read and dropped.
    const Prop* species = nullptr;
    for (const auto& p : props) {
      if (p.type != 'S')
        f.columns.push_back(XyzColumn{p.name, p.count, {}});
      else if (!species)
        species = &p;
    }
    // With a filter only the chosen frame is stored, and of it only the particles kept.
    const bool stored = filter ? frame_no == index : (frame_no == index || index < 0);
    if (filter && stored && filter->frame) filter->frame(f, n);
    std::string sp;
    std::vector<double> values;
    for (std::size_t i = 0; i < n; ++i) {
      sp = "X";
      values.clear();
      if (!std::getline(in, line))
        throw InputError(SourceLocation{path, line_no + 1, 1},
                         fmt::format("file ends after {} of {} particles", i, n));
      ++line_no;
      std::size_t pos = 0;
      for (const auto& p : props) {
        for (int k = 0; k < p.count; ++k) {
          while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
          const std::size_t start = pos;
          while (pos < line.size() && line[pos] != ' ' && line[pos] != '\t' && line[pos] != '\r')
            ++pos;
          const std::string token = line.substr(start, pos - start);
          if (token.empty())
            throw InputError(SourceLocation{path, line_no, static_cast<int>(start) + 1},
                             "missing value for property '" + p.name + "'");
          if (p.type == 'S') {
            if (&p == species && k == 0) sp = token;
            continue;
          }
          char* end = nullptr;
          const double v = std::strtod(token.c_str(), &end);
          const std::string shown = token.size() > 40 ? token.substr(0, 40) + "..." : token;
          if (end != token.c_str() + token.size())
            throw InputError(
                SourceLocation{path, line_no, static_cast<int>(start) + 1},
                "expected a number for property '" + p.name + "', got '" + shown + "'");
          if (!std::isfinite(v))
            throw InputError(SourceLocation{path, line_no, static_cast<int>(start) + 1},
                             "property '" + p.name + "' is not finite ('" + shown + "')");
          values.push_back(v);
        }
      }
      if (!stored || (filter && filter->keep && !filter->keep(i, sp, values.data()))) continue;
      f.species.push_back(sp);
      std::size_t at = 0;
      for (auto& column : f.columns)
        for (int k = 0; k < column.components; ++k) column.values.push_back(values[at++]);
      if (rows) rows->push_back(i);
    }
    if (stored) {
      frame = std::move(f);
      have = true;
      if (index >= 0) break;
    }
    ++frame_no;
  }
  if (!have)
    throw InputError(SourceLocation{path, 0, 0},
                     fmt::format("no frame {} in the file ({} frames)", index, frame_no));
  return frame;
}

}  // namespace

XyzFrame read_xyz(const std::string& path, int index) {
  return read_frames(path, index, nullptr, nullptr);
}

namespace {

// Frames of the file by their count lines alone (nothing parsed but the counts): up to and
// including the first frame whose count or length is wrong, so that the reading of frames up to
// that one meets the error read_xyz would.
int count_frames(const std::string& path) {
  check_input_file(path, "particle file", max_data_file_bytes);
  std::ifstream in(path);
  if (!in) throw InputError(SourceLocation{path, 0, 0}, "cannot open the particle file");
  std::string line;
  int frames = 0;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    ++frames;
    long long n = -1;
    try {
      std::size_t used = 0;
      n = std::stoll(line, &used);
      if (line.find_first_not_of(" \t\r", used) != std::string::npos) n = -1;
    } catch (...) {
    }
    if (n < 0 || !std::getline(in, line)) return frames;
    for (long long i = 0; i < n; ++i)
      if (!std::getline(in, line)) return frames;
  }
  return frames;
}

}  // namespace

XyzFrame read_xyz(const std::string& path, int index, const XyzFilter& filter,
                  std::vector<std::size_t>& rows) {
  rows.clear();
  if (index < 0) {
    // The last frame: count the frames first; the reading below checks every one.
    const int frames = count_frames(path);
    if (frames == 0)
      throw InputError(SourceLocation{path, 0, 0},
                       fmt::format("no frame {} in the file (0 frames)", index));
    index = frames - 1;
  }
  return read_frames(path, index, &filter, &rows);
}

}  // namespace hayate::core

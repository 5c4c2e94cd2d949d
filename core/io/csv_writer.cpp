#include "io/csv_writer.hpp"

#include "config/error.hpp"
#include "io/atomic_file.hpp"

#include <fmt/format.h>

#include <charconv>
#include <stdexcept>

namespace hayate::core {

std::string format_csv_value(const CsvValue& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value)) return fmt::format("{}", *d);
  const std::string& s = std::get<std::string>(value);
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string format_csv_row(const std::vector<CsvValue>& values) {
  std::string line;
  for (std::size_t i = 0; i < values.size(); ++i)
    line += (i ? "," : "") + format_csv_value(values[i]);
  return line + '\n';
}

namespace {

std::string header_line(const std::vector<std::string>& columns) {
  std::string header;
  for (std::size_t i = 0; i < columns.size(); ++i) header += (i ? "," : "") + columns[i];
  return header + '\n';
}

// Reads an earlier run's series: the bytes of its header and of its rows up to step `after`,
// stopping at the first row that is later, incomplete (a killed run) or not a row of steps.
std::uint64_t keep_rows(std::istream& in, const std::string& path, const std::string& header,
                        std::int64_t after, std::optional<std::int64_t>& last) {
  std::string line;
  if (!std::getline(in, line) || in.eof()) return 0;  // no complete header
  if (line + '\n' != header) {
    const auto shown = [](std::string s) {
      if (s.size() > 80) s = s.substr(0, 77) + "...";
      for (char& c : s)
        if (static_cast<unsigned char>(c) < 0x20) c = '?';
      return s;
    };
    throw InputError(SourceLocation{path, 1, 1},
                     "the series to continue holds the columns '" + shown(line) +
                         "', this run writes '" + shown(header.substr(0, header.size() - 1)) +
                         "'; restart into another output folder or move the file away");
  }
  std::uint64_t kept = header.size();
  while (std::getline(in, line) && !in.eof()) {
    std::int64_t step = 0;
    const char* end = line.data() + line.size();
    const auto [ptr, ec] = std::from_chars(line.data(), end, step);
    if (ec != std::errc() || (ptr != end && *ptr != ',') || step > after) break;
    kept += line.size() + 1;
    last = step;
  }
  return kept;
}

}  // namespace

CsvWriter::CsvWriter(RunOutputs& outputs, const std::string& path, std::vector<std::string> columns,
                     std::optional<std::int64_t> resume_after)
    : columns_(std::move(columns)) {
  if (columns_.empty() || columns_[0] != "step")
    throw std::logic_error("the first column of the series '" + path + "' must be 'step'");
  const std::string header = header_line(columns_);
  SeriesFile::Keep keep;
  if (resume_after)
    keep = [&](std::istream& in, const std::string& source) {
      return keep_rows(in, source, header, *resume_after, last_kept_);
    };
  file_ = outputs.open(path, false, header, keep);
  if (file_->kept() == 0) last_kept_.reset();
}

void CsvWriter::row(const std::vector<CsvValue>& values) {
  if (values.size() != columns_.size()) {
    throw std::logic_error(fmt::format("CSV row of {} values for {} columns in '{}'", values.size(),
                                       columns_.size(), file_->path()));
  }
  if (last_kept_) {
    const auto* step = std::get_if<std::int64_t>(&values[0]);
    if (step && *step <= *last_kept_) return;
  }
  file_->stream() << format_csv_row(values);
  file_->end_record();
}

void write_csv_file(const std::string& path, const std::vector<std::string>& columns,
                    const std::vector<std::vector<CsvValue>>& rows) {
  AtomicFile file(path);
  file.stream() << header_line(columns);
  for (const auto& r : rows) {
    if (r.size() != columns.size())
      throw std::logic_error(fmt::format("CSV row of {} values for {} columns in '{}'", r.size(),
                                         columns.size(), path));
    file.stream() << format_csv_row(r);
  }
  file.commit();
}

}  // namespace hayate::core

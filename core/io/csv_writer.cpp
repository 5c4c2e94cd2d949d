#include "io/csv_writer.hpp"

#include <fmt/format.h>

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

CsvWriter::CsvWriter(const std::string& path, std::vector<std::string> columns)
    : file_(path), columns_(std::move(columns)) {
  std::string header;
  for (std::size_t i = 0; i < columns_.size(); ++i) header += (i ? "," : "") + columns_[i];
  file_.stream() << header << '\n';
}

void CsvWriter::row(const std::vector<CsvValue>& values) {
  if (values.size() != columns_.size()) {
    throw std::logic_error(fmt::format("CSV row of {} values for {} columns in '{}'", values.size(),
                                       columns_.size(), file_.path()));
  }
  std::string line;
  for (std::size_t i = 0; i < values.size(); ++i)
    line += (i ? "," : "") + format_csv_value(values[i]);
  // Flushed per row so a crash or a kill loses nothing already computed.
  file_.stream() << line << '\n' << std::flush;
}

}  // namespace hayate::core

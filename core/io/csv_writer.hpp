#pragma once
// Time-series CSV with a header row; values are written in shortest round-trip form.
#include "io/atomic_file.hpp"

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace hayate::core {

using CsvValue = std::variant<std::int64_t, double, std::string>;

class CsvWriter {
 public:
  CsvWriter() = default;
  CsvWriter(const std::string& path, std::vector<std::string> columns);

  bool is_open() const { return file_.is_open(); }
  const std::vector<std::string>& columns() const { return columns_; }
  // One row; the count must match the header (std::logic_error otherwise).
  void row(const std::vector<CsvValue>& values);
  void commit() { file_.commit(); }

 private:
  AtomicFile file_;
  std::vector<std::string> columns_;
};

std::string format_csv_value(const CsvValue& value);

}  // namespace hayate::core

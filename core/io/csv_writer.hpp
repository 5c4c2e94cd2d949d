#pragma once
// CSV with a header row; values are written in shortest round-trip form. A time series
// (CsvWriter) is a SeriesFile of the run whose first column is the step; a whole table is
// written at once with write_csv_file.
#include "io/series_file.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace hayate::core {

using CsvValue = std::variant<std::int64_t, double, std::string>;

class CsvWriter {
 public:
  CsvWriter() = default;
  // A series of the run in `outputs`; columns[0] must be "step". With `resume_after` (a
  // restart from that step) it continues the file an earlier run left: rows up to that step
  // are kept, later ones dropped, and rows this run writes for steps the file already holds
  // are skipped. The file must hold the same columns (InputError otherwise).
  CsvWriter(RunOutputs& outputs, const std::string& path, std::vector<std::string> columns,
            std::optional<std::int64_t> resume_after = {});

  bool is_open() const { return file_ != nullptr; }
  const std::vector<std::string>& columns() const { return columns_; }
  // One row, on disk when this returns; the count must match the header (std::logic_error
  // otherwise). Throws RuntimeFailure naming the file when the write fails.
  void row(const std::vector<CsvValue>& values);

 private:
  std::shared_ptr<SeriesFile> file_;
  std::vector<std::string> columns_;
  std::optional<std::int64_t> last_kept_;  // the last step kept from the earlier run
};

std::string format_csv_value(const CsvValue& value);
// "a,b,c\n"
std::string format_csv_row(const std::vector<CsvValue>& values);

// A whole CSV file (header and rows) written atomically.
void write_csv_file(const std::string& path, const std::vector<std::string>& columns,
                    const std::vector<std::vector<CsvValue>>& rows);

}  // namespace hayate::core

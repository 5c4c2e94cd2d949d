#pragma once
// What a validation test measured, written as CSV when HAYATE_VALIDATION_OUTPUT names a folder:
// scripts/plot_validation.py draws the pictures of the "Validation" sections of docs/user/ from
// these files, so a picture shows exactly what the test checked.
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace hayate::test {

inline void write_validation_csv(const std::string& name, const std::vector<std::string>& header,
                                 const std::vector<std::vector<double>>& rows) {
  const char* dir = std::getenv("HAYATE_VALIDATION_OUTPUT");
  if (!dir || !*dir) return;
  std::filesystem::create_directories(dir);
  std::ofstream out(std::filesystem::path(dir) / (name + ".csv"));
  for (std::size_t c = 0; c < header.size(); ++c) out << (c ? "," : "") << header[c];
  out << '\n';
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) out << (c ? "," : "") << fmt::format("{}", row[c]);
    out << '\n';
  }
}

}  // namespace hayate::test

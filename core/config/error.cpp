#include "config/error.hpp"

namespace hayate::core {
namespace {
std::string join(const std::vector<Diagnostic>& diagnostics) {
  std::string text;
  for (const auto& d : diagnostics) {
    if (!text.empty()) text += '\n';
    text += d.str();
  }
  return text;
}
}  // namespace

std::string SourceLocation::str() const {
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

InputError::InputError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(join(diagnostics)), diagnostics_(std::move(diagnostics)) {}

InputError::InputError(SourceLocation where, std::string message)
    : InputError(std::vector<Diagnostic>{Diagnostic{std::move(where), std::move(message)}}) {}

}  // namespace hayate::core

#include "config/error.hpp"

#include <cstdio>

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

// Control bytes as escapes; `keep_newlines` leaves line breaks of multi-line messages alone.
std::string escaped(const std::string& text, std::size_t limit, bool keep_newlines) {
  std::string out;
  std::size_t used = 0;
  for (; used < text.size() && out.size() < limit; ++used) {
    const unsigned char c = static_cast<unsigned char>(text[used]);
    if (c == '\n' && keep_newlines) {
      out += '\n';
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (used < text.size()) out += "... (" + std::to_string(text.size() - used) + " more bytes)";
  return out;
}
}  // namespace

std::string echo(const std::string& value, std::size_t limit) {
  return escaped(value, limit, false);
}

std::string quoted(const std::string& value, std::size_t limit) {
  return "'" + echo(value, limit) + "'";
}

std::string SourceLocation::str() const {
  const std::string name = escaped(file, max_message_chars / 2, false);
  if (line <= 0) return name;
  return name + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string Diagnostic::str() const {
  return where.str() + ": " + escaped(message, max_message_chars, true);
}

InputError::InputError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(join(diagnostics)), diagnostics_(std::move(diagnostics)) {}

InputError::InputError(SourceLocation where, std::string message)
    : InputError(std::vector<Diagnostic>{Diagnostic{std::move(where), std::move(message)}}) {}

}  // namespace hayate::core

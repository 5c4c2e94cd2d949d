#pragma once
// Line-by-line reading of whitespace-separated text files with '#' comments (LAMMPS data and
// table files): every token keeps its column, so every error names file:line:col.
#include "config/error.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace hayate::core {

struct TextToken {
  std::string text;
  int column;  // 1-based
};

struct TextLine {
  int number = 0;
  std::vector<TextToken> tokens;  // without the comment
  std::string comment;            // text after '#', trimmed
};

class TextReader {
 public:
  // `what` names the file in the error when it cannot be opened ("the table file").
  TextReader(const std::string& path, const std::string& what) : path_(path), in_(path) {
    if (!in_) throw InputError(SourceLocation{path, 0, 0}, "cannot open " + what);
  }

  // The next line, or false at the end of the file.
  bool next(TextLine& line) {
    std::string text;
    if (!std::getline(in_, text)) return false;
    line = TextLine{};
    line.number = ++number_;
    const auto hash = text.find('#');
    if (hash != std::string::npos) {
      line.comment = text.substr(hash + 1);
      const auto b = line.comment.find_first_not_of(" \t\r");
      const auto e = line.comment.find_last_not_of(" \t\r");
      line.comment = b == std::string::npos ? "" : line.comment.substr(b, e - b + 1);
      text.resize(hash);
    }
    std::size_t i = 0;
    while (i < text.size()) {
      while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) ++i;
      if (i >= text.size()) break;
      const std::size_t b = i;
      while (i < text.size() && text[i] != ' ' && text[i] != '\t' && text[i] != '\r') ++i;
      line.tokens.push_back(TextToken{text.substr(b, i - b), static_cast<int>(b) + 1});
    }
    return true;
  }

  [[noreturn]] void fail(int line, int column, const std::string& message) const {
    throw InputError(SourceLocation{path_, line, column}, message);
  }
  [[noreturn]] void fail(const TextLine& line, std::size_t token,
                         const std::string& message) const {
    fail(line.number, token < line.tokens.size() ? line.tokens[token].column : 1, message);
  }

  double real(const TextLine& line, std::size_t k, const char* what) const {
    const std::string& s = line.tokens[k].text;
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v))
      fail(line, k, fmt::format("expected a number for {}, found '{}'", what, s));
    return v;
  }

  std::int64_t integer(const TextLine& line, std::size_t k, const char* what) const {
    const std::string& s = line.tokens[k].text;
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (end != s.c_str() + s.size() || errno == ERANGE)
      fail(line, k, fmt::format("expected an integer for {}, found '{}'", what, s));
    return v;
  }

  int lines_read() const { return number_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::ifstream in_;
  int number_ = 0;
};

}  // namespace hayate::core

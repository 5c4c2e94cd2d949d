#include "io/series_file.hpp"

#include "config/error.hpp"
#include "io/atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace hayate::core {

namespace fs = std::filesystem;

namespace {

std::string part_name(const std::string& path) {
  return path + ".part";
}

// The file a restarted run continues: the newer of "<path>.part" (a run that did not finish)
// and "<path>" (a run that did); "" when there is neither.
std::string earlier_file(const std::string& path) {
  std::error_code ec;
  const std::string part = part_name(path);
  const bool has_part = fs::is_regular_file(part, ec);
  const bool has_final = fs::is_regular_file(path, ec);
  if (has_part && has_final) {
    const auto part_time = fs::last_write_time(part, ec);
    const auto final_time = fs::last_write_time(path, ec);
    return part_time >= final_time ? part : path;
  }
  return has_part ? part : has_final ? path : std::string();
}

}  // namespace

SeriesFile::SeriesFile(std::string path, bool binary, std::string header, const Keep& keep)
    : path_(std::move(path)), binary_(binary), header_(std::move(header)) {
  check_output_name(path_);
  check_output_name(part_name(path_));
  if (!keep) return;
  source_ = earlier_file(path_);
  if (source_.empty()) return;
  std::ifstream in(source_, std::ios::binary);
  if (!in)
    throw RuntimeFailure("cannot read '" + source_ + "' to continue it: " + std::strerror(errno));
  kept_ = keep(in, source_);
  if (kept_ == 0) source_.clear();
}

SeriesFile::~SeriesFile() {
  if (out_.is_open()) out_.close();
}

void SeriesFile::open() {
  const std::string part = part_name(path_);
  const auto mode = std::ios::out | (binary_ ? std::ios::binary : std::ios::openmode());
  if (source_.empty()) {
    errno = 0;
    out_.open(part, mode | std::ios::trunc);
    if (!out_) throw_write_error(part, errno);
    opened_ = true;
    out_ << header_;
    end_record();
    return;
  }
  if (source_ != part && std::rename(source_.c_str(), part.c_str()) != 0)
    throw RuntimeFailure("cannot rename '" + source_ + "' to '" + part +
                         "': " + std::strerror(errno));
  std::error_code ec;
  fs::resize_file(part, kept_, ec);
  if (ec)
    throw RuntimeFailure("cannot cut '" + part + "' at its last kept record: " + ec.message());
  errno = 0;
  out_.open(part, mode | std::ios::app);
  if (!out_) throw_write_error(part, errno);
  opened_ = true;
  complete_ = kept_;
}

std::ostream& SeriesFile::stream() {
  if (committed_) throw std::logic_error("series '" + path_ + "' written after its commit");
  if (!opened_) open();
  return out_;
}

void SeriesFile::end_record() {
  errno = 0;
  out_.flush();
  if (!out_) throw_write_error(path_, errno);
  const auto end = out_.tellp();
  if (end < 0) throw_write_error(path_, errno);
  complete_ = static_cast<std::uint64_t>(end);
}

void SeriesFile::commit() {
  if (committed_) return;
  if (!opened_) open();
  errno = 0;
  out_.flush();
  if (!out_) throw_write_error(path_, errno);
  out_.close();
  if (!out_) throw_write_error(path_, errno);
  committed_ = true;
  if (std::rename(part_name(path_).c_str(), path_.c_str()) != 0)
    throw RuntimeFailure("cannot rename '" + part_name(path_) + "' to '" + path_ +
                         "': " + std::strerror(errno));
}

std::string SeriesFile::keep_written() noexcept {
  // Not opened: this run wrote nothing here, and the earlier run's file stays as it was.
  if (committed_ || !opened_) return {};
  committed_ = true;
  out_.close();
  const std::string part = part_name(path_);
  std::error_code ec;
  fs::resize_file(part, complete_, ec);
  if (ec) return "cannot cut '" + part + "' after its last complete record: " + ec.message();
  if (std::rename(part.c_str(), path_.c_str()) != 0)
    return "cannot rename '" + part + "' to '" + path_ + "': " + std::strerror(errno);
  return {};
}

std::shared_ptr<SeriesFile> RunOutputs::open(const std::string& path, bool binary,
                                             std::string header, const SeriesFile::Keep& keep) {
  auto file = std::make_shared<SeriesFile>(path, binary, std::move(header), keep);
  for (auto& f : files_)
    if (f->path() == path) {
      f = file;
      return file;
    }
  files_.push_back(file);
  return file;
}

void RunOutputs::commit() {
  for (auto& f : files_) f->commit();
}

std::vector<std::string> RunOutputs::keep_written() noexcept {
  std::vector<std::string> failures;
  for (auto& f : files_) {
    std::string failure = f->keep_written();
    if (!failure.empty()) failures.push_back(std::move(failure));
  }
  return failures;
}

}  // namespace hayate::core

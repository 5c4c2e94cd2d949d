#include "run/progress.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>

namespace hayate::core {

namespace {
std::string clock_text(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
}
}  // namespace

Progress::Progress(std::int64_t first_step, std::int64_t last_step, bool quiet, double interval_s)
    : first_(first_step),
      last_(last_step),
      quiet_(quiet),
      tty_(isatty(fileno(stderr)) != 0),
      interval_s_(interval_s),
      start_(Clock::now()),
      last_print_(start_) {}

void Progress::update(std::int64_t step) {
  if (quiet_) return;
  const auto now = Clock::now();
  const double since = std::chrono::duration<double>(now - last_print_).count();
  if (since < (tty_ ? 0.25 : interval_s_)) return;
  last_print_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(step - first_) / elapsed : 0.0;
  const double eta = rate > 0 ? static_cast<double>(last_ - step) / rate : 0.0;
  const double percent = last_ > first_ ? 100.0 * (step - first_) / (last_ - first_) : 100.0;
  const std::string text =
      fmt::format("step {}/{} ({:.0f}%)  {:.4g} steps/s  elapsed {}  ETA {}", step, last_, percent,
                  rate, clock_text(elapsed), clock_text(eta));
  if (tty_) {
    std::fprintf(stderr, "\r%s\033[K", text.c_str());
    std::fflush(stderr);
    drawn_ = true;
  } else {
    spdlog::info("{}", text);
  }
}

void Progress::interrupt() {
  if (drawn_) std::fprintf(stderr, "\r\033[K");
  drawn_ = false;
}

void Progress::finish(std::int64_t step) {
  if (quiet_) return;
  if (drawn_) std::fprintf(stderr, "\r\033[K");
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  spdlog::info("{} steps in {:.3f} s ({:.4g} steps/s)", step - first_, elapsed,
               elapsed > 0 ? (step - first_) / elapsed : 0.0);
}

}  // namespace hayate::core

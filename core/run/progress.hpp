#pragma once
#include <chrono>
#include <cstdint>

namespace hayate::core {

// Rate and ETA: redrawn in place on a terminal, a log line every `interval_s` otherwise.
class Progress {
 public:
  Progress(std::int64_t first_step, std::int64_t last_step, bool quiet, double interval_s);
  void update(std::int64_t step);
  void finish(std::int64_t step);
  // The run stopped on an error: clears a line drawn in place, so the error starts a line.
  void interrupt();

 private:
  using Clock = std::chrono::steady_clock;
  std::int64_t first_, last_;
  bool quiet_, tty_;
  double interval_s_;
  Clock::time_point start_, last_print_;
  bool drawn_ = false;
};

}  // namespace hayate::core

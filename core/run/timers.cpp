#include "run/timers.hpp"

#include "io/csv_writer.hpp"

#include <Kokkos_Core.hpp>

namespace hayate::core {

Timers::Scope::Scope(Timers& timers, std::string phase)
    : timers_(timers), phase_(std::move(phase)), start_(std::chrono::steady_clock::now()) {}

Timers::Scope::~Scope() {
  Kokkos::fence();
  const auto stop = std::chrono::steady_clock::now();
  timers_.add(phase_, std::chrono::duration<double>(stop - start_).count());
}

void Timers::add(const std::string& phase, double seconds) {
  for (auto& p : phases_) {
    if (p.name == phase) {
      ++p.calls;
      p.seconds += seconds;
      return;
    }
  }
  phases_.push_back(Phase{phase, 1, seconds});
}

double Timers::total() const {
  double t = 0;
  for (const auto& p : phases_) t += p.seconds;
  return t;
}

void Timers::write_csv(const std::string& path) const {
  const double all = total();
  std::vector<std::vector<CsvValue>> rows;
  for (const auto& p : phases_) {
    rows.push_back({p.name, p.calls, p.seconds, p.calls ? p.seconds / p.calls : 0.0,
                    all > 0 ? 100.0 * p.seconds / all : 0.0});
  }
  write_csv_file(path, {"phase", "calls", "total_s", "mean_s", "percent"}, rows);
}

}  // namespace hayate::core

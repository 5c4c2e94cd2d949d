#pragma once
// Per-phase wall time. A scope fences the device before it stops the clock, so asynchronous
// kernels are charged to the phase that launched them.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace hayate::core {

class Timers {
 public:
  struct Phase {
    std::string name;
    std::int64_t calls = 0;
    double seconds = 0.0;
  };

  class Scope {
   public:
    Scope(Timers& timers, std::string phase);
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    ~Scope();

   private:
    Timers& timers_;
    std::string phase_;
    std::chrono::steady_clock::time_point start_;
  };

  Scope scope(const std::string& phase) { return Scope(*this, phase); }
  void add(const std::string& phase, double seconds);
  const std::vector<Phase>& phases() const { return phases_; }
  double total() const;
  // "phase,calls,total_s,mean_s,percent", phases in first-use order.
  void write_csv(const std::string& path) const;

 private:
  std::vector<Phase> phases_;
};

}  // namespace hayate::core

#pragma once
// Which execution-space instance each kernel ran on, seen through the Kokkos Tools interface:
// every parallel_for/reduce/scan reports the device id of the instance that launched it. Tests
// run an algorithm on an instance apart from the default one (compat::IndependentInstance) and
// check that all of hayate's kernels went there.
#include "compat/kokkos_compat.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace hayate::test {

class KernelLaunchLog {
 public:
  KernelLaunchLog() {
    entries().clear();
    Kokkos::Tools::Experimental::set_begin_parallel_for_callback(&record);
    Kokkos::Tools::Experimental::set_begin_parallel_reduce_callback(&record);
    Kokkos::Tools::Experimental::set_begin_parallel_scan_callback(&record);
  }
  ~KernelLaunchLog() {
    Kokkos::Tools::Experimental::set_begin_parallel_for_callback(nullptr);
    Kokkos::Tools::Experimental::set_begin_parallel_reduce_callback(nullptr);
    Kokkos::Tools::Experimental::set_begin_parallel_scan_callback(nullptr);
  }
  KernelLaunchLog(const KernelLaunchLog&) = delete;
  KernelLaunchLog& operator=(const KernelLaunchLog&) = delete;

  // hayate's own kernels (labels "hayate::..."), with the device id each ran on.
  std::vector<std::pair<std::string, std::uint32_t>> hayate_kernels() const {
    std::lock_guard<std::mutex> lock(mutex());
    std::vector<std::pair<std::string, std::uint32_t>> out;
    for (const auto& e : entries())
      if (e.first.rfind("hayate::", 0) == 0) out.push_back(e);
    return out;
  }

  // hayate kernels that did not run on the instance with device id `id`.
  std::vector<std::string> elsewhere(std::uint32_t id) const {
    std::vector<std::string> out;
    for (const auto& e : hayate_kernels())
      if (e.second != id) out.push_back(e.first);
    return out;
  }

 private:
  static std::vector<std::pair<std::string, std::uint32_t>>& entries() {
    static std::vector<std::pair<std::string, std::uint32_t>> e;
    return e;
  }
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static void record(const char* name, std::uint32_t device_id, std::uint64_t* kernel_id) {
    std::lock_guard<std::mutex> lock(mutex());
    entries().emplace_back(name, device_id);
    *kernel_id = entries().size();
  }
};

}  // namespace hayate::test

// One main for every unit test: Kokkos lives for the whole test program.
#include "cli_runner.hpp"
#include "compat/kokkos_compat.hpp"
#include "run/registry.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#if defined(__GLIBC__)
#include <execinfo.h>
#include <unistd.h>
#endif

namespace {
// A crashing test should say where: the stack goes to stderr (addresses resolve with addr2line
// against the unstripped binary), then the default action runs.
void print_stack_and_reraise(int sig) {
#if defined(__GLIBC__)
  void* frames[64];
  const int n = backtrace(frames, 64);
  const char msg[] = "\nfatal signal in a unit test; stack:\n";
  [[maybe_unused]] const auto w = write(STDERR_FILENO, msg, sizeof(msg) - 1);
  backtrace_symbols_fd(frames, n, STDERR_FILENO);
#endif
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}
}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::signal(SIGSEGV, print_stack_and_reraise);
  std::signal(SIGBUS, print_stack_and_reraise);
  std::signal(SIGFPE, print_stack_and_reraise);
  hayate::compat::initialize_kokkos(0, -1);
  hayate::core::register_builtin_problems(hayate::core::Registry::instance());
  const int rc = RUN_ALL_TESTS();
  // Scratch files stay for inspection when a test failed.
  std::error_code ignored;
  if (rc == 0) std::filesystem::remove_all(hayate::test::scratch_path(""), ignored);
  Kokkos::finalize();
  return rc;
}

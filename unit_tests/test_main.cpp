// One main for every unit test: Kokkos lives for the whole test program.
#include "cli_runner.hpp"
#include "compat/kokkos_compat.hpp"
#include "run/registry.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <utility>
#if defined(__GLIBC__)
#include <dlfcn.h>
#include <execinfo.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdio>
#endif

namespace {
// A crashing test should say where: the faulting address and instruction (as an offset into
// the object that holds it, for addr2line; the unwinder cannot always step past the signal
// frame, e.g. out of a driver library), then the stack, then the default action runs.
void print_stack_and_reraise(int sig, siginfo_t* info, void* context) {
#if defined(__GLIBC__)
  char line[512];
  const void* pc = nullptr;
  // The word at the stack top: after a call through a null pointer (instruction 0) it is the
  // return address into the caller.
  const void* top = nullptr;
#if defined(__x86_64__)
  const auto& regs = static_cast<ucontext_t*>(context)->uc_mcontext.gregs;
  pc = reinterpret_cast<const void*>(regs[REG_RIP]);
  top = *reinterpret_cast<const void* const*>(regs[REG_RSP]);
#endif
  int len = std::snprintf(line, sizeof line, "\nfatal signal %d in a unit test: address %p\n", sig,
                          info->si_addr);
  [[maybe_unused]] auto w = write(STDERR_FILENO, line, std::size_t(len > 0 ? len : 0));
  for (const auto& [what, at] : {std::pair{"instruction", pc}, std::pair{"stack top", top}}) {
    Dl_info where{};
    const bool known = at != nullptr && dladdr(at, &where) != 0 && where.dli_fname != nullptr;
    len = std::snprintf(
        line, sizeof line, "%s %p (%s+%#lx)\n", what, at, known ? where.dli_fname : "?",
        known ? static_cast<unsigned long>(static_cast<const char*>(at) -
                                           static_cast<const char*>(where.dli_fbase))
              : 0ul);
    w = write(STDERR_FILENO, line, std::size_t(len > 0 ? len : 0));
  }
  void* frames[64];
  const int n = backtrace(frames, 64);
  const char msg[] = "stack:\n";
  w = write(STDERR_FILENO, msg, sizeof(msg) - 1);
  backtrace_symbols_fd(frames, n, STDERR_FILENO);
#else
  (void)info;
  (void)context;
#endif
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}
}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  struct sigaction action {};
  action.sa_sigaction = print_stack_and_reraise;
  action.sa_flags = SA_SIGINFO;
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE}) sigaction(sig, &action, nullptr);
  hayate::compat::initialize_kokkos(0, -1);
  hayate::core::register_builtin_problems(hayate::core::Registry::instance());
  const int rc = RUN_ALL_TESTS();
  // Scratch files stay for inspection when a test failed.
  std::error_code ignored;
  if (rc == 0) std::filesystem::remove_all(hayate::test::scratch_path(""), ignored);
  Kokkos::finalize();
  return rc;
}

// A Kokkos Tools connector that writes the host-side timeline of a run: every kernel dispatch,
// deep copy, fence, allocation and deallocation with its begin and end time. Load it with
//   KOKKOS_PROFILE_LIBRARY=.../libhayate_timeline.so hayate run ...
// and summarise with benchmarks/tools/timeline_summary.py. Settings (environment):
//   HAYATE_TIMELINE_FILE  output CSV (default timeline.csv)
//   HAYATE_TIMELINE_SYNC  1: wait for the device after each kernel (through the driver's
//                         cuCtxSynchronize), so a kernel's span is its execution and the time
//                         between spans is what the host spends between launches; 0 (default):
//                         spans are the asynchronous dispatch times.
// What a tick of an asynchronous program spends on the host (allocations, launches, host reads)
// is invisible to a kernel profiler; this is where it shows.
#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Event {
  char kind;  // k kernel, c copy, f fence, a alloc, d dealloc
  double begin, end;
  std::uint64_t bytes;
  std::string name;
};

struct State {
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  std::vector<Event> events;
  std::size_t copy = 0;
  int (*sync)() = nullptr;
  double now() const {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  }
};

State* state = nullptr;

void begin(char kind, const char* name, std::uint64_t* id) {
  *id = state->events.size();
  state->events.push_back({kind, state->now(), 0.0, 0, name ? name : ""});
}

void end(std::uint64_t id) {
  if (state->sync != nullptr && state->events[id].kind == 'k') state->sync();
  state->events[id].end = state->now();
}

}  // namespace

extern "C" {

struct Kokkos_Profiling_KokkosPDeviceInfo;
struct Kokkos_Profiling_SpaceHandle {
  char name[64];
};

void kokkosp_init_library(const int, const std::uint64_t, const std::uint32_t,
                          Kokkos_Profiling_KokkosPDeviceInfo*) {
  state = new State;
  state->events.reserve(1 << 20);
  const char* sync = std::getenv("HAYATE_TIMELINE_SYNC");
  if (sync != nullptr && std::strcmp(sync, "1") == 0) {
    void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    void* fn = cuda != nullptr ? dlsym(cuda, "cuCtxSynchronize") : nullptr;
    if (fn == nullptr)
      std::fprintf(stderr, "hayate_timeline: no cuCtxSynchronize; spans are dispatch times\n");
    else
      state->sync = reinterpret_cast<int (*)()>(fn);
  }
}

void kokkosp_finalize_library() {
  const char* path = std::getenv("HAYATE_TIMELINE_FILE");
  FILE* f = std::fopen(path != nullptr ? path : "timeline.csv", "w");
  if (f == nullptr) {
    std::fprintf(stderr, "hayate_timeline: cannot write %s\n", path ? path : "timeline.csv");
    return;
  }
  std::fprintf(f, "kind,begin_us,end_us,bytes,name\n");
  for (const Event& e : state->events) {
    std::string name = e.name;
    for (char& c : name)
      if (c == ',' || c == '\n') c = ';';
    std::fprintf(f, "%c,%.3f,%.3f,%llu,%s\n", e.kind, e.begin, e.end,
                 static_cast<unsigned long long>(e.bytes), name.c_str());
  }
  std::fclose(f);
  delete state;
  state = nullptr;
}

void kokkosp_begin_parallel_for(const char* name, const std::uint32_t, std::uint64_t* id) {
  begin('k', name, id);
}
void kokkosp_end_parallel_for(const std::uint64_t id) {
  end(id);
}
void kokkosp_begin_parallel_reduce(const char* name, const std::uint32_t, std::uint64_t* id) {
  begin('k', name, id);
}
void kokkosp_end_parallel_reduce(const std::uint64_t id) {
  end(id);
}
void kokkosp_begin_parallel_scan(const char* name, const std::uint32_t, std::uint64_t* id) {
  begin('k', name, id);
}
void kokkosp_end_parallel_scan(const std::uint64_t id) {
  end(id);
}
void kokkosp_begin_fence(const char* name, const std::uint32_t, std::uint64_t* id) {
  begin('f', name, id);
}
void kokkosp_end_fence(const std::uint64_t id) {
  end(id);
}

void kokkosp_begin_deep_copy(Kokkos_Profiling_SpaceHandle, const char* dst, const void*,
                             Kokkos_Profiling_SpaceHandle, const char* src, const void*,
                             std::uint64_t bytes) {
  std::uint64_t id;
  begin('c', (std::string(dst ? dst : "") + " <- " + (src ? src : "")).c_str(), &id);
  state->events[id].bytes = bytes;
  state->copy = id;
}
void kokkosp_end_deep_copy() {
  end(state->copy);
}

void kokkosp_allocate_data(const Kokkos_Profiling_SpaceHandle space, const char* name, const void*,
                           const std::uint64_t bytes) {
  const double t = state->now();
  state->events.push_back({'a', t, t, bytes, std::string(space.name) + ":" + (name ? name : "")});
}
void kokkosp_deallocate_data(const Kokkos_Profiling_SpaceHandle space, const char* name,
                             const void*, const std::uint64_t bytes) {
  const double t = state->now();
  state->events.push_back({'d', t, t, bytes, std::string(space.name) + ":" + (name ? name : "")});
}

}  // extern "C"

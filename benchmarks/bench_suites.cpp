// Every benchmark suite of the hayate_bench executable.
namespace hayate::bench {
void register_stream_suite();
void register_ode_suite();

void register_all_suites() {
  register_stream_suite();
  register_ode_suite();
}
}  // namespace hayate::bench

// Every benchmark suite of the hayate_bench executable.
namespace hayate::bench {
void register_stream_suite();
void register_gravity_suite();
void register_md_suite();
void register_fhp_suite();
void register_ode_suite();

void register_all_suites() {
  register_stream_suite();
  register_gravity_suite();
  register_md_suite();
  register_fhp_suite();
  register_ode_suite();
}
}  // namespace hayate::bench

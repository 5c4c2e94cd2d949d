# Checks of the Kokkos install hayate builds against, run once at configure time.
#
# Default-constructed Views: with GCC 12.2 to 12.4, Kokkos' mdspan-based View (the default of
# the Kokkos development line after 4.6, before its pull request 8223) gets a tracker without
# its "untracked" flag, so assigning to or destroying any default-constructed View dereferences
# a null allocation record. The program would build and then crash at its first such View.
function(hayate_check_kokkos_views)
  if(CMAKE_CROSSCOMPILING)
    message(STATUS "hayate: cross-compiling, default-constructed View check skipped")
    return()
  endif()
  try_run(_run _compiled "${CMAKE_BINARY_DIR}/kokkos-view-check"
          SOURCES "${PROJECT_SOURCE_DIR}/cmake/checks/kokkos_view_default.cpp"
          LINK_LIBRARIES Kokkos::kokkos
          CXX_STANDARD 17
          COMPILE_OUTPUT_VARIABLE _compile_log
          RUN_OUTPUT_VARIABLE _run_log)
  if(NOT _compiled)
    message(FATAL_ERROR "hayate: a minimal program using Kokkos ${Kokkos_VERSION} does not "
                        "compile with ${CMAKE_CXX_COMPILER}:\n${_compile_log}")
  endif()
  # A CUDA-enabled Kokkos links the CUDA driver library: on a build machine without a GPU
  # driver the probe cannot start, which says nothing about the Views.
  if(_run_log MATCHES "error while loading shared libraries")
    string(STRIP "${_run_log}" _run_log)
    message(STATUS "hayate: the default-constructed View probe could not start on this "
                   "machine (${_run_log}); run the unit tests where it can")
    return()
  endif()
  if(NOT _run EQUAL 0)
    message(FATAL_ERROR
      "hayate: Kokkos ${Kokkos_VERSION} compiled by ${CMAKE_CXX_COMPILER_ID} "
      "${CMAKE_CXX_COMPILER_VERSION} produces broken default-constructed Views (a program that "
      "assigns to one crashes; the probe ended with ${_run}). This is the GCC 12.2-12.4 "
      "miscompilation of the tracker's constexpr constructor in Kokkos' mdspan-based View "
      "(Kokkos issue 7464, fixed by Kokkos pull request 8223). Any of these works: a Kokkos that contains the fix, Kokkos "
      "configured with -DKokkos_ENABLE_IMPL_VIEW_LEGACY=ON, or GCC 13 or later (or clang) for "
      "both Kokkos and hayate. See docs/user/building.md.")
  endif()
  message(STATUS "hayate: Kokkos ${Kokkos_VERSION}: default-constructed Views are sound")
endfunction()

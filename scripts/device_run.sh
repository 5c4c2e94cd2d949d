#!/usr/bin/env bash
# One call on a GPU machine, over builds carried there packed (scripts/pack_cuda_build.sh): a
# list of actions run in order, each writing into OUT; a short summary is printed last.
#
#   scripts/device_run.sh OUT ACTION...
#     unpack ARCHIVE                  tar -xJf ARCHIVE from the repository root
#     info BUILD                      hayate info and nvidia-smi
#     tests BUILD [FILTER]            BUILD's unit tests (default filter: the CUDA and common ones)
#     ab BASE NEW [ROUNDS]            benchmarks/regress.sh BASE NEW OUT/ab-<NEW>
#     sanitize BUILD TOOL FILTER [SHARDS [LIMIT]]
#                                     compute-sanitizer --tool TOOL over BUILD's tests in FILTER,
#                                     SHARDS processes side by side, each cut at LIMIT s (540)
#     bench BUILD FILTER [REPS]       BUILD's benchmarks matching FILTER, medians of REPS (5)
#     lammps DIR INPUT [VAR=VALUE]... LAMMPS packed in DIR (scripts/pack_lammps.sh) on INPUT
#     run BUILD INPUT [KEY=VALUE|--FLAG=VALUE]...
#                                     BUILD's hayate on INPUT with --set KEY=VALUE and run's own
#                                     flags (--gpu-aware=on); its CSV files under 1 MB (timers,
#                                     thermo) and its log are kept in OUT
#     mpirun RANKS BUILD INPUT [KEY=VALUE|--FLAG=VALUE]...
#                                     the same on RANKS ranks, launched by the Open MPI that
#                                     scripts/pack_openmpi.sh packed (unpacked first)
#     mpitests BUILD                  unit_tests/mpi/test_mpi_runs.py over BUILD's hayate, ranks
#                                     launched by that Open MPI
#
# Example: scripts/device_run.sh out unpack .deps/ab.tar.xz tests build/cuda ab build/cuda-base build/cuda
set -uo pipefail
out=${1:?usage: device_run.sh OUT ACTION...}
shift
mkdir -p "$out"
here=$(cd "$(dirname "$0")/.." && pwd)
summary="$out/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
libs() { echo "$1/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; }
name_of() { echo "$1" | tr '/' '_'; }
actions='^(unpack|info|tests|ab|sanitize|bench|lammps|run|mpirun|mpitests)$'
# The carried Open MPI (scripts/pack_openmpi.sh), relocated by OPAL_PREFIX; the single-copy
# mechanism (CMA) needs a ptrace permission containers withhold.
use_openmpi() {
  export OPAL_PREFIX="$here/.deps/ompi" PMIX_MCA_mca_base_component_path="$here/.deps/ompi/pmix"
  export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_ALLOW_RUN_AS_ROOT=1 \
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
}
count=0

while [ $# -gt 0 ]; do
  action=$1
  shift
  case "$action" in
    unpack)
      (cd "$here" && tar -xJf "$1") && note "unpacked $1" || note "unpack $1: FAILED"
      shift ;;
    info)
      LD_LIBRARY_PATH=$(libs "$1") "$1/hayate" info >"$out/info-$(name_of "$1").txt" 2>&1
      nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv \
        >>"$out/info-$(name_of "$1").txt" 2>&1
      note "info $1: $(head -n 1 "$out/info-$(name_of "$1").txt")"
      shift ;;
    tests)
      build=$1
      shift
      filter='-*/serial.*:*/openmp.*'
      if [ $# -gt 0 ] && [ "${1#-}" = "$1" ] && ! [[ "$1" =~ $actions ]]; then
        filter=$1
        shift
      fi
      log="$out/tests-$(name_of "$build").txt"
      start=$SECONDS
      (cd "$build/unit_tests" && LD_LIBRARY_PATH=$(libs "$here/$build") OMP_PROC_BIND=false \
         HAYATE_TEST_BINARY="$here/$build/hayate" HAYATE_TEST_SOURCE_DIR="$here" \
         ./hayate_tests --gtest_filter="$filter") >"$log" 2>&1
      rc=$?
      note "tests $build ($filter): exit $rc, $(grep -E '^\[  (PASSED|FAILED)  \]' "$log" | tr '\n' ' ')($((SECONDS - start)) s)"
      grep -E '^\[  FAILED  \] ' "$log" | head -n 20 | tee -a "$summary" ;;
    ab)
      base=$1 new=$2
      shift 2
      rounds=3
      if [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then rounds=$1; shift; fi
      start=$SECONDS
      ROUNDS=$rounds bash "$here/benchmarks/regress.sh" "$base" "$new" "$out/ab-$(name_of "$new")" \
        >"$out/ab-$(name_of "$new").txt" 2>&1
      note "ab $base -> $new: exit $? ($((SECONDS - start)) s)"
      tail -n 30 "$out/ab-$(name_of "$new").txt" >>"$summary" ;;
    sanitize)
      # Shards run side by side on the one GPU (gtest's GTEST_TOTAL_SHARDS), each stopped after
      # LIMIT seconds; the note counts the tests that finished, so a cut run says how far it got.
      build=$1 tool=$2 filter=$3
      shift 3
      shards=1 limit=540
      if [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then shards=$1; shift; fi
      if [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then limit=$1; shift; fi
      start=$SECONDS
      for shard in $(seq 0 $((shards - 1))); do
        log="$out/sanitize-$tool-$(name_of "$build")-$shard.txt"
        (cd "$build/unit_tests" && LD_LIBRARY_PATH=$(libs "$here/$build") OMP_PROC_BIND=false \
           OMP_NUM_THREADS=2 GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$shard \
           HAYATE_TEST_BINARY="$here/$build/hayate" HAYATE_TEST_SOURCE_DIR="$here" \
           timeout "$limit" compute-sanitizer --tool "$tool" --error-exitcode 9 ./hayate_tests \
           --gtest_filter="$filter"; echo "exit $?") >"$log" 2>&1 &
      done
      wait
      logs=("$out/sanitize-$tool-$(name_of "$build")"-*.txt)
      ok=$(cat "${logs[@]}" | grep -c '^\[       OK \]')
      failed=$(cat "${logs[@]}" | grep -c '^\[  FAILED  \] [A-Za-z]')
      exits=$(grep -h '^exit ' "${logs[@]}" | sort | uniq -c | tr -s ' ' | tr '\n' ',')
      hazards=$(grep -h -E '(ERROR|RACECHECK) SUMMARY' "${logs[@]}" | sort | uniq -c | tr -s ' ' | tr '\n' ',')
      note "sanitize $tool $build ($filter, $shards shards): $ok tests ok, $failed failed;" \
        "exits:$exits summaries:$hazards ($((SECONDS - start)) s)" ;;
    bench)
      build=$1 filter=$2
      shift 2
      reps=5
      if [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then reps=$1; shift; fi
      count=$((count + 1))
      json="$out/bench-$(name_of "$build")-$count.json"
      start=$SECONDS
      LD_LIBRARY_PATH=$(libs "$here/$build") OMP_PROC_BIND=spread OMP_PLACES=threads \
        "$build/benchmarks/hayate_bench" --benchmark_filter="$filter" \
        --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true \
        --benchmark_out="$json" --benchmark_out_format=json >"${json%.json}.txt" 2>&1
      note "bench $build ($filter): exit $? ($((SECONDS - start)) s)"
      python3 "$here/scripts/bench_table.py" --medians "$json" >>"$summary" 2>&1 ;;
    lammps)
      dir=$1 input=$2
      shift 2
      vars=()
      while [ $# -gt 0 ] && [[ "$1" == *=* ]]; do vars+=(-var "${1%%=*}" "${1#*=}"); shift; done
      count=$((count + 1))
      log="$out/lammps-$count.log"
      start=$SECONDS
      (cd "$(dirname "$input")" && "$here/$dir/run-lmp" -in "$(basename "$input")" "${vars[@]}" \
         -log "$log" -screen none)
      note "lammps $input ${vars[*]}: exit $? ($((SECONDS - start)) s)"
      grep -E '^(Loop time|Pair  |Kspace|Neigh )' "$log" | tee -a "$summary" >/dev/null ;;
    run|mpirun)
      launch=()
      if [ "$action" = mpirun ]; then
        use_openmpi
        # The cores shared out between the ranks, unbound: bound to the same cores, ranks of
        # OpenMP threads wait on each other (4 ranks of in.lj ran 40x slower).
        threads=$(($(nproc) / $1))
        launch=("$OPAL_PREFIX/bin/orterun" --oversubscribe -np "$1" -x LD_LIBRARY_PATH -x OMP_PROC_BIND
                -x OMP_NUM_THREADS=$((threads > 0 ? threads : 1)))
        shift
      fi
      build=$1 input=$2
      shift 2
      sets=()
      while [ $# -gt 0 ] && [[ "$1" == *=* ]]; do
        case "$1" in --*) sets+=("$1") ;; *) sets+=(--set "$1") ;; esac
        shift
      done
      count=$((count + 1))
      dir="$out/run-$count"
      scratch=$(mktemp -d)  # snapshots of millions of particles stay on the machine
      start=$SECONDS
      lib=$(libs "$here/$build")
      [ ${#launch[@]} -gt 0 ] && lib="$OPAL_PREFIX/libs:$lib"
      bind=spread
      [ ${#launch[@]} -gt 0 ] && bind=false
      LD_LIBRARY_PATH=$lib OMP_PROC_BIND=$bind OMP_PLACES=threads \
        "${launch[@]}" "$build/hayate" run "$input" "${sets[@]}" --output "$scratch/run" >"$dir.log" 2>&1
      note "$action ${launch[*]:+${launch[3]} ranks }$input ${sets[*]}: exit $? ($((SECONDS - start)) s)"
      mkdir -p "$dir"
      find "$scratch/run" -maxdepth 1 -name '*.csv' -size -1024k -exec cp {} "$dir/" \;
      rm -rf "$scratch"
      grep -E 'steps in' "$dir.log" | tee -a "$summary" >/dev/null ;;
    mpitests)
      build=$1
      shift
      use_openmpi
      log="$out/mpitests-$(name_of "$build").txt"
      start=$SECONDS
      LD_LIBRARY_PATH="$OPAL_PREFIX/libs:$(libs "$here/$build")" python3 \
        "$here/unit_tests/mpi/test_mpi_runs.py" --binary "$here/$build/hayate" \
        --mpirun "$OPAL_PREFIX/bin/orterun" --source-dir "$here" >"$log" 2>&1
      note "mpitests $build: exit $?, $(tail -n 1 "$log") ($((SECONDS - start)) s)"
      grep -E '^FAIL ' "$log" | head -n 20 | tee -a "$summary" ;;
    *)
      note "unknown action '$action'"
      exit 2 ;;
  esac
done
cat "$summary"

# Sourced by the ODE device scripts (run from the repository root): the CUDA build's paths and
# libraries, the bundled models, OUTPUT_DIR made absolute in $out, and the machine's description
# in $out/$2. usage: ode_env OUTPUT_DIR DEVICE_FILE
ode_env() {
  root=$(pwd)
  build="$root/build/cuda"
  [ -d "$build/devlibs" ] && export LD_LIBRARY_PATH="$build/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export HAYATE_ODE_INPUTS="$root/inputs/ode"
  mkdir -p "$1"
  out=$(cd "$1" && pwd)
  { date -u; git rev-parse HEAD 2>/dev/null; nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv 2>/dev/null; } > "$out/$2"
}

# Thin wrapper for the README commands. Everything installs from this repository's own files:
# Debian packages (scripts/install_deps.sh), then Kokkos from Debian's trilinos source (cmake/).
PRESET ?= openmp
JOBS ?= $(shell nproc)
BUILD := build/$(PRESET)
HAYATE := $(BUILD)/hayate

.PHONY: all deps configure build run test cuda debug-test bench docs clean

all: build

deps:
	bash scripts/install_deps.sh

configure: deps
	cmake --preset $(PRESET)

build: configure
	cmake --build --preset $(PRESET) -j $(JOBS)

# A real, short run of a shipped input (seconds on a laptop).
run: build
	$(HAYATE) info
	$(HAYATE) check inputs/stream/bandwidth.yaml
	OMP_PROC_BIND=$${OMP_PROC_BIND:-spread} OMP_PLACES=$${OMP_PLACES:-threads} \
	  $(HAYATE) run inputs/stream/bandwidth.yaml

test: build
	ctest --preset $(PRESET)

# CUDA binary (sm_90) with the OpenMP host backend; builds here, runs on the GPU machine.
cuda:
	$(MAKE) build PRESET=cuda

debug-test:
	$(MAKE) test PRESET=debug

bench: build
	$(BUILD)/benchmarks/hayate_bench --benchmark_min_time=0.2

# Regenerates the input reference from the schemas.
docs: build
	$(HAYATE) schema > docs/input_reference.md

clean:
	rm -rf build

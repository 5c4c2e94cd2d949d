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

# The four solvers on shipped inputs, about a minute on two cores (scripts/showcase.sh).
run: build
	bash scripts/showcase.sh $(HAYATE) out/showcase

test: build
	ctest --preset $(PRESET)

# CUDA binary (sm_90) with the OpenMP host backend; builds here, runs on the GPU machine.
cuda:
	$(MAKE) build PRESET=cuda

debug-test:
	$(MAKE) test PRESET=debug

bench: build
	$(BUILD)/benchmarks/hayate_bench --benchmark_min_time=0.2

# Regenerates the input and tuning references from the schemas.
docs: build
	$(HAYATE) schema > docs/user/input-reference.md
	$(HAYATE) schema --tuning > docs/dev/tuning.md

clean:
	rm -rf build

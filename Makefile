# Thin wrapper for the README commands. Everything installs from this repository's own files:
# Debian packages (scripts/install_deps.sh), then Kokkos from Debian's trilinos source (cmake/).
SHELL := /bin/bash
PRESET ?= openmp
JOBS ?= $(shell nproc)
BUILD := build/$(PRESET)
HAYATE := $(BUILD)/hayate

.PHONY: all deps configure build run test cuda cuda-check debug-test fuzz bench docs clean

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

# CI's CUDA gate: the cuda preset's hayate compiles, no kernel starts spilling or passes an
# occupancy step in registers against benchmarks/reference/cuda-resources.json, and no
# host-device lambda is compiled in two translation units (scripts/check_cuda_lambdas.sh).
cuda-check: deps
	cmake --preset cuda-check
	cmake --build --preset cuda-check -j $(JOBS) 2>&1 | tee build/cuda-check/ptxas.log | grep -v '^ptxas info\|^    [0-9]* bytes stack' ; test $${PIPESTATUS[0]} -eq 0
	python3 scripts/cuda_resources.py check build/cuda-check/ptxas.log
	bash scripts/check_cuda_lambdas.sh build/cuda-check/hayate

# The sanitizer build (AddressSanitizer + UndefinedBehaviorSanitizer, -O0 -g1, typed tests on
# Serial) and its tests: the unit tests and the fuzz subset, two at a time (CI runs it).
debug-test:
	$(MAKE) test PRESET=debug

# The fuzz campaign: 10,000 seeded mutations of every shipped input and model file and of data
# files through check and short runs (CI runs 300 of them: ctest -L fuzz). docs/dev/reliability.md
fuzz: build
	python3 scripts/fuzz/fuzz.py --binary $(HAYATE) --cases $${CASES:-10000} --jobs $(JOBS) \
	  --work $(BUILD)/fuzz --report $(BUILD)/fuzz/report.json

bench: build
	$(BUILD)/benchmarks/hayate_bench --benchmark_min_time=0.2

# Regenerates the input and tuning references from the schemas.
docs: build
	$(HAYATE) schema > docs/user/input-reference.md
	$(HAYATE) schema --tuning > docs/dev/tuning.md

clean:
	rm -rf build

# bench.mk - `make bench`: one run, one table (bench/bench.c, docs/performance.md).
#
#   make bench [BENCH_ARGS="--reps 31"] [BENCH_PYTHON=python3-with-numpy]
#        memcpy (the limit), numpy (the peer; python3-numpy), the exact and SIMD quantization
#        kernels per type and layout from 1 KB to 64 MB, whole executes at MobileNet-v2 and
#        digits I/O (shared vs ordinary buffers), 4 callers on one graph with a 1.37 ms
#        execute, Elixir's predict vs the C call, profiling on a 100-op graph (sampled
#        throughput, read-back time, resident memory), 64 digits rows as one execute with a
#        batch multiple vs 64 chunks; deadlines; 1920x1080 frames into a 640x640 input and a
#        YOLO head's decode next to OpenCV (BENCH_CV2_PYTHON: a python3 with cv2); loading
#        (bench/bench_load.c: the memory a 50 MiB binary adds mapped vs copied, the spill-fill
#        of 4 contexts shared vs each its own, 4 loads of 500 ms in one list call vs one after
#        another, the graphs deserialized when 1 of 4 is asked for, what a shared spill-fill
#        costs two models at once); then the tables as ratios.
#        Then the Elixir rows: answers as messages (bench/async_bench.exs), deadlines at every
#        wait and many callers (bench/waits_bench.exs).
#        BENCH_ARGS="--quick" is a smoke run; "--only kernels,calls" picks sections.
#   make quant-bench [QUANT_BENCH_ARGS="--isa sse2"]
#        the kernels section alone.
#
# Plain -O2 build (build/plain, no sanitizers). Not part of `make test` or CI: the figures
# depend on the machine and its load, and nothing in them passes or fails.

BENCH_BUILD := build/plain
# the first python3 that imports numpy (pyenv shims may hide Debian's python3-numpy)
BENCH_PYTHON ?= $(shell for p in python3 /usr/bin/python3; do \
  $$p -c 'import numpy' >/dev/null 2>&1 && { command -v $$p; break; }; done)
# the first python3 that imports cv2 (Debian's python3-opencv): the vision rows' peer
BENCH_CV2_PYTHON ?= $(shell for p in python3 /usr/bin/python3; do \
  $$p -c 'import cv2, numpy' >/dev/null 2>&1 && { command -v $$p; break; }; done)
BENCH_ARGS ?=
QUANT_BENCH_ARGS ?=
BENCH_OBJ = $(call obj,$(sort $(wildcard bench/*.c)))

.PHONY: bench quant-bench bench-build

$(BUILD)/bench: $(BENCH_OBJ) $(LIB_A)
	@$(if $(Q),echo "  LD      $@",true)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(BENCH_OBJ) $(LIB_A) $(LIBS)

$(BUILD)/bench-models/mobilenet_io.bin: bench/mobilenet_io.txt $(REFBUILD)
	@mkdir -p $(dir $@)
	$(Q)$(REFBUILD) $< $@

$(BUILD)/bench-models/chain100.bin: models/chain100/chain100.txt $(REFBUILD)
	@mkdir -p $(dir $@)
	$(Q)$(REFBUILD) $< $@

bench-build:
	$(Q)$(MAKE) --no-print-directory BUILD=$(BENCH_BUILD) DEBUG=0 SAN= all \
	  $(BENCH_BUILD)/bench $(BENCH_BUILD)/bench-models/mobilenet_io.bin \
	  $(BENCH_BUILD)/bench-models/chain100.bin

bench: bench-build
	@[ -n "$(BENCH_PYTHON)" ] || echo "bench: no python3 with numpy found: the numpy row stays empty (Debian: apt-get install python3-numpy)"
	env -u MAKEFLAGS -u MFLAGS $(BENCH_BUILD)/bench --build $(BENCH_BUILD) \
	  --python "$(BENCH_PYTHON)" --cv2-python "$(BENCH_CV2_PYTHON)" --elixir "mix run" \
	  $(BENCH_ARGS)
	elixir --erl "+SDio 1" -S mix run bench/async_bench.exs
	mix run bench/waits_bench.exs

quant-bench: bench-build
	$(BENCH_BUILD)/bench --only kernels $(QUANT_BENCH_ARGS)

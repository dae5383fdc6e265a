# quant.mk - the quantization kernels' exhaustive check and benchmark (src/quant*.c).
#
#   make test-quant-exhaustive [QUANT_STEP=K] [QUANT_THREADS=2]
#        every float bit pattern (2^32) through each SIMD kernel this CPU runs (SSE2, AVX2) and
#        the exact scalar path, for several (dtype, scale, zero point) sets, byte for byte, NaN
#        indices included (test/quant/exhaustive.c; about ten minutes on two cores). QUANT_STEP=K
#        checks every K-th chunk of 65536 patterns only.
#   make test-quant-exhaustive-aarch64 [QUANT_STEP=61]
#        the same for the NEON kernels, built with the aarch64 cross compiler and run under
#        qemu-user (mk/cross.mk); sampled by default, as qemu is ~30x slower (QUANT_STEP=1: all).
#   make quant-bench: the kernels section of `make bench` (mk/bench.mk).
#
# Plain -O2 builds (DEBUG=0, no sanitizers): these runs are about the kernels' numbers and
# speed; make test runs the randomized exactness tests under ASan/UBSan.

QUANT_STEP ?= 1
QUANT_THREADS ?= 2
QUANT_AARCH64_STEP ?= 61
QUANT_TOOL_OBJ = $(call obj,$(sort $(wildcard src/quant/*.c)) src/base/dtype.c src/base/errors.c)

.PHONY: test-quant-exhaustive test-quant-exhaustive-aarch64

$(BUILD)/quant_exhaustive: $(call obj,test/quant/exhaustive.c) $(QUANT_TOOL_OBJ)
	@$(if $(Q),echo "  LD      $@",true)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

test-quant-exhaustive:
	$(Q)$(MAKE) --no-print-directory BUILD=build/plain DEBUG=0 SAN= build/plain/quant_exhaustive
	build/plain/quant_exhaustive --step $(QUANT_STEP) --threads $(QUANT_THREADS)

test-quant-exhaustive-aarch64:
	@[ -n "$(QEMU_AARCH64)" ] || { echo "test-quant-exhaustive-aarch64: no qemu-aarch64 (see mk/cross.mk)"; exit 1; }
	$(Q)$(MAKE) --no-print-directory CROSSCOMPILE=$(AARCH64_PREFIX) BUILD=$(AARCH64_BUILD) \
	  DEBUG=0 SAN= $(AARCH64_BUILD)/quant_exhaustive
	$(AARCH64_EMU) $(AARCH64_BUILD)/quant_exhaustive \
	  --step $(if $(filter command line,$(origin QUANT_STEP)),$(QUANT_STEP),$(QUANT_AARCH64_STEP)) \
	  --threads $(QUANT_THREADS)

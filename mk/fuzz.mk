# fuzz.mk - the libFuzzer targets in fuzz/ and running them (docs/reliability.md).
#
#   make fuzz [FUZZ_SECONDS=60] [FUZZ_TARGETS="npy quantize"]
#        builds build/fuzz, then runs each target for FUZZ_SECONDS (-max_total_time) on a
#        fresh copy of its seeds (fuzz/corpus/<target>/ is never grown) in
#        build/fuzz/run/<target>/; fails when any target finds a crash, a failed check, a
#        leak, a timeout or an out-of-memory (the input is saved there as crash-*, leak-*,
#        timeout-*, oom-*). A summary per target: build/fuzz/run/summary.txt.
#   make fuzz-build      only the fuzzers, build/fuzz/fuzz_<target>, and the libraries they load
#
# Targets (fuzz/<target>.c says what each checks): model_read, public_api, build_text, npy,
# quantize, onnx_model, vision. Needs clang with its libFuzzer runtime (Debian: clang,
# libclang-rt-14-dev).
# Run one by hand: build/fuzz/fuzz_<target> [libFuzzer flags] <corpus dir or inputs>.

FUZZ_CC ?= clang
FUZZ_BUILD := build/fuzz
FUZZ_SECONDS ?= 60
FUZZ_ALL := $(sort $(patsubst fuzz/%.c,%,$(wildcard fuzz/*.c)))
FUZZ_TARGETS ?= $(FUZZ_ALL)

# Everything in build/fuzz is instrumented: the core, the reference model code and the
# reference libraries the public_api target dlopens, so coverage and ASan reach into them.
FUZZ_SAN := -fsanitize=address,undefined,fuzzer-no-link -fno-omit-frame-pointer \
            -fno-sanitize-recover=undefined
# The project's warnings stay errors under clang, but two: clang's -Wcast-align warns on every
# target where gcc's (the project's compiler) warns only where unaligned loads trap, about the
# reads of QNN's tensor and graph-info arrays at the library's stride (UBSan checks their
# alignment at run time here); -Wformat-nonliteral flags the QNN log callback, which formats
# the backend's own format string by design.
FUZZ_WFLAGS := -Wno-cast-align -Wno-format-nonliteral
# SO_LDFLAGS without -z defs: clang links the sanitizer runtimes (and libFuzzer's coverage
# callbacks) into the executable only, and the reference libraries resolve them from it when
# they are loaded.
FUZZ_MAKE := $(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) DEBUG=0 \
             SAN="$(FUZZ_SAN)" CFLAGS="$(FUZZ_WFLAGS)" SO_LDFLAGS=-shared

# libFuzzer flags for every target, then per target. -malloc_limit_mb: no single allocation
# for an input of a few KiB needs more (a larger one is reported as a bug). -timeout: the
# slowest legitimate inputs (public_api: a Conv2d within the 256 KiB activation bound) take
# well under a second.
FUZZ_FLAGS ?= -timeout=30 -rss_limit_mb=2048 -malloc_limit_mb=128 -print_final_stats=1
FUZZ_FLAGS_model_read := -max_len=16384
FUZZ_FLAGS_public_api := -max_len=8192
FUZZ_FLAGS_build_text := -max_len=4096
FUZZ_FLAGS_npy := -max_len=1024
FUZZ_FLAGS_quantize := -max_len=1024
FUZZ_FLAGS_onnx_model := -max_len=16384
FUZZ_FLAGS_vision := -max_len=4096

.PHONY: fuzz fuzz-build fuzz-binaries
fuzz: fuzz-build
	$(Q)FUZZ_FLAGS="$(FUZZ_FLAGS)" $(foreach t,$(FUZZ_ALL),FUZZ_FLAGS_$(t)="$(FUZZ_FLAGS_$(t))") \
	  bash fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-build:
	@printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n);\n%s\n' \
	  'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; return (int)(n * 0); }' \
	  | $(FUZZ_CC) -x c -fsanitize=fuzzer,address,undefined - -o /dev/null >/dev/null 2>&1 || { \
	  echo "fuzz: '$(FUZZ_CC) -fsanitize=fuzzer,address,undefined' cannot link a fuzzer."; \
	  echo "  On Debian/Ubuntu: apt-get install clang libclang-rt-14-dev (FUZZ_CC=... for another clang)"; \
	  exit 1; }
	$(Q)$(FUZZ_MAKE) fuzz-binaries

# Inside the build above ($(BUILD) = build/fuzz).
FUZZ_LINK = $(filter-out $(call obj,$(QUANT_SRC)),$(REFMODEL_OBJ)) \
            $(call obj,tools/htpu/npy.c) $(LIB_A)
fuzz-binaries: $(patsubst %,$(BUILD)/fuzz_%,$(FUZZ_ALL)) $(REF_BACKEND) $(REF_SYSTEM) \
               $(REF_CDSPRPC)

$(BUILD)/obj/fuzz/%.o: ALL_CFLAGS += -Itools/htpu
# kept (make would delete them as intermediates of the pattern rule below)
.SECONDARY: $(patsubst %,$(BUILD)/obj/fuzz/%.o,$(FUZZ_ALL))

$(BUILD)/fuzz_%: $(BUILD)/obj/fuzz/%.o $(FUZZ_LINK)
	@$(if $(Q),echo "  LD      $@",true)
	$(Q)$(CC) $(ALL_LDFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LINK) $(LIBS)

# hexagon_tpu - C core, reference backend, htpu command, tests.
#
# Targets
#   all (default)  static + shared library, reference backend libraries, htpu, htpu-refbuild
#   test           C tests under AddressSanitizer + UndefinedBehaviorSanitizer (build/asan)
#   valgrind       C tests under valgrind --leak-check=full (build/plain)
#   test-tsan      the threaded C tests under ThreadSanitizer (build/tsan)
#   check-abi      compare src/qnn declarations with an SDK: make check-abi QNN_SDK_ROOT=<dir>
#   check-rooms    no room of the core calls a room above it, no circle of files
#                  (tools/check-rooms.py over the objects; `make test` runs it)
#   check-sizes    no function over 80 lines, no file over 600, in src/ c_src/ reference/
#                  tools/ lib/, save tools/check-sizes.allow's reasoned exceptions
#                  (tools/check-sizes.py; `make test` runs it)
#   fuzz           libFuzzer targets (fuzz/) built with clang, FUZZ_SECONDS each (mk/fuzz.mk)
#   soak           long checked runs through the C API and Elixir (mk/soak.mk)
#   test-elixir-optional, test-elixir-loop   ExUnit with the real Nx and :telemetry (mk/elixir.mk)
#   test-package   the Hex package's files laid out and used from a fresh project (mk/package.mk)
#   docs, test-docs   HexDocs with the vendored ExDoc into doc/, checked in headless Chromium
#                  (mk/docs.mk)
#   check-profile-page  the htpu profile page rendered in headless Chromium (mk/profile.mk)
#   clean
#
# Variables
#   CC, CROSSCOMPILE (prefix such as aarch64-linux-gnu-), CFLAGS, LDFLAGS, DEBUG=1, V=1,
#   BUILD (output directory, default build/plain), WERROR=0 to drop -Werror.
#
# Nothing Qualcomm is linked: QNN libraries are dlopen'ed at run time (-ldl only).

CROSSCOMPILE ?=
CC := $(if $(CROSSCOMPILE),$(CROSSCOMPILE)gcc,$(CC))
BUILD ?= build/plain
WERROR ?= 1
DEBUG ?= 0

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wpointer-arith \
        -Wcast-align -Wformat=2 -Wvla $(if $(filter 1,$(WERROR)),-Werror,)
OPT := $(if $(filter 1,$(DEBUG)),-O0 -g3,-O2 -g)
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -fPIC -fvisibility=hidden $(WARN) $(OPT) \
               -MMD -MP
ALL_CFLAGS := $(BASE_CFLAGS) $(SAN) $(CFLAGS)
# Include paths per layer (a source's first directory), so a layer cannot reach a header it
# must not use. The core and the reference backend share src/ (the QNN ABI declarations, the
# quantization kernels); the htpu command, the examples and the NIF are clients of include/
# only (the command also of common/: the libc-only never-blocking file reads and a root's
# paths); the tests,
# benchmarks and fuzzers look inside.
INC_src := -Iinclude -Isrc -Icommon
INC_common := -Icommon
INC_reference := -Iinclude -Isrc -Icommon -Ireference/model
INC_tools := -Iinclude -Icommon
INC_examples := -Iinclude
INC_c_src := -Iinclude
INC_test := -Iinclude -Isrc -Icommon -Ireference/model
INC_bench := -Iinclude -Isrc -Ireference/backend
INC_fuzz := -Iinclude -Isrc -Ireference/model
layer_includes = $(INC_$(firstword $(subst /, ,$(1))))
ALL_LDFLAGS := $(SAN) $(LDFLAGS)
# shared objects must resolve everything they use (catches a missing object at link time)
SO_LDFLAGS := -shared -Wl,-z,defs
LIBS := -ldl -lpthread -lm

ifeq ($(V),1)
Q :=
else
Q := @
endif

# The core: the top (runtime, context, graph: src/*.c) over its rooms, each a folder whose
# door header says what lives there and what the others may use (docs/architecture.md, "The
# core's rooms"). A room calls only rooms below it:
#   top -> exec -> profile, shape, quant, model -> device -> loader -> base (qnn/: the ABI,
#   headers only); board (the board's readings, the cross-process NPU lock) -> base, called by
#   the top and exec; vision (frames into inputs, detector outputs into detections: vision.h)
#   -> quant, base, called by the top; qnnset (QNN sets: one release's libraries together,
#   one set per process) -> base, called by the top
CORE_ROOMS := base board loader qnnset device model quant shape vision profile exec
CORE_SRC := $(sort $(wildcard src/*.c $(foreach r,$(CORE_ROOMS),src/$(r)/*.c) common/*.c))
REFMODEL_SRC := $(sort $(wildcard reference/model/*.c))
# the quantization kernels (and the error and dtype helpers they use) are shared by the core
# and the reference interpreter; common/file_open.c (never-blocking file reads) by the core
# (whose archive gives it to the htpu command) and the reference builder
QUANT_SRC := $(sort $(wildcard src/quant/*.c)) src/base/dtype.c src/base/errors.c \
             common/file_open.c common/printable.c common/build_id_scan.c
TEST_SRC := $(sort $(wildcard test/c/*.c))
# the command and its subdirectories (doctor/: one file per check)
HTPU_SRC := $(sort $(wildcard tools/htpu/*.c tools/htpu/*/*.c))

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

CORE_OBJ := $(call obj,$(CORE_SRC))
REFMODEL_OBJ := $(call obj,$(REFMODEL_SRC)) $(call obj,$(QUANT_SRC))
TEST_OBJ := $(call obj,$(TEST_SRC))
HTPU_OBJ := $(call obj,$(HTPU_SRC))

LIB_A := $(BUILD)/libhexagon_tpu.a
LIB_SO := $(BUILD)/libhexagon_tpu.so
REF_BACKEND := $(BUILD)/libhtpu_refbackend.so
REF_SYSTEM := $(BUILD)/libhtpu_refsystem.so
REF_CDSPRPC := $(BUILD)/libhtpu_refcdsprpc.so
REFBUILD := $(BUILD)/htpu-refbuild
HTPU := $(BUILD)/htpu
TEST_RUNNER := $(BUILD)/test_runner

.PHONY: all test valgrind test-tsan check-abi check-rooms check-sizes clean demo
ifeq ($(wildcard tools/htpu),)
# The Hex package's files (mix.exs `package:`) hold what `make nif` (mix compile) builds, not
# the htpu command or the tests: say so instead of failing on a missing source.
PACKAGE_ONLY = @echo "make $@: this is the hexagon_tpu package, which builds the NIF and the \
reference backend with 'make nif' (mix compile runs it); the htpu command, the tests and the \
demo are in the repository" >&2; exit 2
all:
	$(PACKAGE_ONLY)
else
all: $(LIB_A) $(LIB_SO) $(REF_BACKEND) $(REF_SYSTEM) $(REFBUILD) $(HTPU) \
     $(if $(wildcard reference/cdsprpc/*.c),$(REF_CDSPRPC))
endif

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<",true)
	$(Q)$(CC) $(ALL_CFLAGS) $(call layer_includes,$<) -c $< -o $@

$(LIB_A): $(CORE_OBJ)
	@$(if $(Q),echo "  AR      $@",true)
	$(Q)rm -f $@ && $(CROSSCOMPILE)ar rcs $@ $^

$(LIB_SO): $(CORE_OBJ)
	@$(if $(Q),echo "  LD      $@",true)
	$(Q)$(CC) $(SO_LDFLAGS) $(ALL_LDFLAGS) -Wl,-soname,libhexagon_tpu.so.0 -o $@ $^ $(LIBS)

$(REF_BACKEND): $(call obj,$(wildcard reference/backend/*.c)) $(REFMODEL_OBJ)
	@$(if $(Q),echo "  LD      $@",true)
	$(Q)$(CC) $(SO_LDFLAGS) $(ALL_LDFLAGS) -o $@ $(sort $^) $(LIBS)

$(REF_SYSTEM): $(call obj,$(wildcard reference/system/*.c)) $(REFMODEL_OBJ)
	@$(if $(Q),echo "  LD      $@",true)
	$(Q)$(CC) $(SO_LDFLAGS) $(ALL_LDFLAGS) -o $@ $(sort $^) $(LIBS)

# A stand-in for libcdsprpc.so: FastRPC shared memory (rpcmem_*) backed by memfd.
$(REF_CDSPRPC): $(call obj,$(wildcard reference/cdsprpc/*.c))
	@$(if $(Q),echo "  LD      $@",true)
	$(Q)$(CC) $(SO_LDFLAGS) $(ALL_LDFLAGS) -o $@ $(sort $^) $(LIBS)

$(REFBUILD): $(call obj,$(wildcard reference/tools/*.c)) $(REFMODEL_OBJ)
	@$(if $(Q),echo "  LD      $@",true)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(HTPU): $(HTPU_OBJ) $(LIB_A)
	@$(if $(Q),echo "  LD      $@",true)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(HTPU_OBJ) $(LIB_A) $(LIBS)

# the core archive comes last: it also provides the quantization kernels to the model objects
TEST_LINK := $(TEST_OBJ) $(filter-out $(call obj,$(QUANT_SRC)),$(REFMODEL_OBJ)) $(LIB_A)
$(TEST_RUNNER): $(TEST_LINK)
	@$(if $(Q),echo "  LD      $@",true)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(TEST_LINK) $(LIBS)

# Tests find the libraries and tools they load through HTPU_TEST_BUILD_DIR. They create QNN
# sessions under a cross-process NPU lock of their own (HTPU_NPU_LOCK, docs/board.md), so a run
# never waits for another checkout's tests creating sessions at the same moment.
TEST_NPU_LOCK := $(CURDIR)/build/npu-test.lock
TEST_GOALS := test valgrind test-tsan test-elixir-optional test-elixir-loop soak soak-short
$(TEST_GOALS): export HTPU_NPU_LOCK := $(TEST_NPU_LOCK)
ifneq ($(filter $(TEST_GOALS),$(MAKECMDGOALS)),)
$(shell mkdir -p $(CURDIR)/build)
endif
ifeq ($(wildcard tools/htpu),)
test demo valgrind:
	$(PACKAGE_ONLY)
else
# where `mix test` builds the NIF's objects
NIF_TEST_OBJ := $(or $(MIX_BUILD_PATH),_build/test)/lib/hexagon_tpu/native/obj
test:
	$(Q)$(MAKE) --no-print-directory BUILD=build/asan DEBUG=1 \
	  SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	  all build/asan/test_runner build/asan/digits_demo build/asan/hello build/asan/vision_driver \
	  qnnsets
	$(Q)python3 tools/check-rooms.py build/asan src reference tools
	$(Q)python3 tools/check-sizes.py
	HTPU_TEST_BUILD_DIR=$(CURDIR)/build/asan \
	  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  build/asan/test_runner $(TESTS)
	$(Q)bash test/cli/test_htpu.sh build/asan
	@echo "demo: digits accuracy through the library (exits non-zero below target)"
	$(Q)ASAN_OPTIONS=detect_leaks=1 build/asan/digits_demo build/asan/libhtpu_refbackend.so \
	  build/asan/libhtpu_refsystem.so $(DIGITS)/digits.bin $(DIGITS)/test_x.f32 \
	  $(DIGITS)/test_y.u8 $(DIGITS)/float_pred.u8 >/dev/null
	$(Q)bash test/cli/test_htpu_run.sh build/asan
	$(Q)bash test/cli/test_htpu_device.sh build/asan
	$(Q)bash test/cli/test_htpu_doctor.sh build/asan
	$(Q)bash test/cli/test_htpu_profile.sh build/asan
	$(Q)bash test/cli/test_htpu_load.sh build/asan
	$(Q)bash test/cli/test_htpu_models.sh build/asan
	$(Q)bash test/cli/test_htpu_sets.sh build/asan
	$(Q)bash test/cli/test_htpu_board.sh build/asan
	$(Q)bash test/cli/test_htpu_detect.sh build/asan
	@echo "vision: frames and detector heads against OpenCV and NumPy (test/vision/oracle.py)"
	$(Q)bash test/vision/run.sh build/asan "$(VISION_PYTHON)"
	@echo "ExUnit: the Elixir package against the reference backend"
	$(Q)bash test/run_exunit.sh
	@# the NIF's objects are mix's (ExUnit just built them): no circle among c_src/'s files
	$(Q)ls $(NIF_TEST_OBJ)/c_src/*.o >/dev/null && \
	  python3 tools/check-rooms.py $(dir $(NIF_TEST_OBJ)) c_src

# The main job: classify the held-out digits through the C library and the reference backend
# (models/digits/README.md), after a first look at the stack with htpu.
DIGITS := models/digits
demo:
	$(Q)$(MAKE) --no-print-directory BUILD=build/plain all build/plain/digits_demo
	build/plain/htpu doctor --backend reference --system-lib reference
	build/plain/htpu info $(DIGITS)/digits.bin --system-lib reference
	build/plain/digits_demo build/plain/libhtpu_refbackend.so build/plain/libhtpu_refsystem.so \
	  $(DIGITS)/digits.bin $(DIGITS)/test_x.f32 $(DIGITS)/test_y.u8 $(DIGITS)/float_pred.u8

$(BUILD)/digits_demo: $(call obj,examples/digits_demo.c) $(LIB_A)
	@$(if $(Q),echo "  LD      $@",true)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/hello: $(call obj,examples/hello.c) $(LIB_A)
	@$(if $(Q),echo "  LD      $@",true)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# ThreadSanitizer over the tests that run threads against shared graphs, contexts and
# runtimes (the core's locks, the execute gate, recovery, the reference backend's registries).
TSAN_TESTS ?= concurrency recovery device_ lifecycle short_ deadline_ async_ timer_ refprof refb_signals refb_async refb_batch profile_ gate_ workers_ load_ spill_fill refb_load
test-tsan:
	$(Q)$(MAKE) --no-print-directory BUILD=build/tsan DEBUG=1 SAN="-fsanitize=thread" \
	  all build/tsan/test_runner
	HTPU_TEST_BUILD_DIR=$(CURDIR)/build/tsan TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	  build/tsan/test_runner $(TSAN_TESTS)

check-rooms: all
	$(Q)python3 tools/check-rooms.py $(BUILD) src reference tools

check-sizes:
	$(Q)python3 tools/check-sizes.py

valgrind:
	$(Q)$(MAKE) --no-print-directory BUILD=build/plain all build/plain/test_runner
	HTPU_TEST_BUILD_DIR=$(CURDIR)/build/plain HTPU_TEST_VALGRIND=1 \
	  valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
	  --show-leak-kinds=definite,indirect build/plain/test_runner $(TESTS)
endif

include $(wildcard mk/*.mk)

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

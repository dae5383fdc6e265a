# cross.mk - cross builds, the aarch64 tests under qemu-user, and the glibc symbol-version check.
#
#   make CROSSCOMPILE=aarch64-linux-gnu- BUILD=build/aarch64 all build/aarch64/test_runner
#   make test-aarch64          build for aarch64 (Debian's cross gcc) and run the C and CLI tests
#                              under qemu-aarch64; then check-glibc on the result
#   make check-glibc [BUILD=build/aarch64] [GLIBC_MAX=2.34]
#                              the newest GLIBC_x.y each executable / shared object of BUILD needs
#
# test-aarch64 installs nothing; .ci/test-aarch64.sh installs the Debian packages and runs it.

# ---- CROSSCOMPILE with or without the trailing dash -----------------------------------------
# The Makefile takes a kbuild-style prefix, CROSSCOMPILE=aarch64-linux-gnu-. Nerves exports
# CROSSCOMPILE=<toolchain>/bin/aarch64-nerves-linux-gnu (no dash) together with
# CC=$CROSSCOMPILE-gcc and AR=$CROSSCOMPILE-ar, so under mix the Makefile would call
# ".../aarch64-nerves-linux-gnugcc". Accept both spellings: add the dash when it is missing and
# recompute CC, which the Makefile derived from the raw value before including this file (its
# recipes expand $(CC) and $(CROSSCOMPILE)ar late, so both see the fixed values; a CC given on
# the command line still wins).
ifneq ($(CROSSCOMPILE),)
ifneq ($(patsubst %-,,$(CROSSCOMPILE)),)
override CROSSCOMPILE := $(CROSSCOMPILE)-
CC := $(CROSSCOMPILE)gcc
endif
endif

# ---- aarch64 under qemu-user ----------------------------------------------------------------
# Debian 12: apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
# (qemu-user-static works too). binfmt_misc is not needed: the tests call the emulator
# explicitly, which also works in containers where binfmt_misc cannot be mounted.
AARCH64_PREFIX ?= aarch64-linux-gnu-
# the target's root for the emulator: ld-linux-aarch64.so.1 and libc.so.6 are loaded from here
AARCH64_SYSROOT ?= /usr/aarch64-linux-gnu
QEMU_AARCH64 ?= $(shell command -v qemu-aarch64 2>/dev/null \
                  || command -v qemu-aarch64-static 2>/dev/null)
AARCH64_BUILD := build/aarch64
AARCH64_EMU = $(QEMU_AARCH64) -L $(AARCH64_SYSROOT)
# The C runner starts build-dir programs itself (test_refmodel_refbuild.c runs htpu-refbuild
# through system()). Without binfmt_misc the kernel cannot execute an aarch64 file, so the runner
# is pointed at this directory instead: the libraries are symlinks to the real ones, the programs
# are scripts that exec the real ones under the emulator.
AARCH64_EMU_DIR := $(AARCH64_BUILD)/qemu-run

.PHONY: test-aarch64 check-glibc

# Plain -O2 (DEBUG=0) and no sanitizers: ASan under qemu-user is unreliable (LeakSanitizer stops
# the world with ptrace, which qemu-user does not emulate, and ASan's large fixed shadow mappings
# can collide with the emulator's own address-space layout), and the x86-64 `make test` already
# runs the same tests under ASan/UBSan. What this target adds is the aarch64 ABI and code: the
# va_list of the QNN log callback (a 32-byte struct on aarch64, an array on x86-64), LP64 layout
# and alignment of the QNN structs, the aarch64 atomics (outline-atomics helpers from libgcc),
# unsigned `char`, and Debian's aarch64 glibc. It cannot find memory-ordering bugs: qemu runs
# the guest's threads with the x86-64 host's stronger ordering.
test-aarch64:
	@missing=""; \
	command -v $(AARCH64_PREFIX)gcc >/dev/null 2>&1 || missing="$$missing gcc-aarch64-linux-gnu"; \
	[ -e $(AARCH64_SYSROOT)/lib/crt1.o ] || missing="$$missing libc6-dev-arm64-cross"; \
	[ -n "$(QEMU_AARCH64)" ] || missing="$$missing qemu-user"; \
	if [ -n "$$missing" ]; then \
	  echo "test-aarch64: missing tools. On Debian/Ubuntu: apt-get install$$missing"; \
	  echo "  (or run .ci/test-aarch64.sh, which installs them; looked for $(AARCH64_PREFIX)gcc,"; \
	  echo "  $(AARCH64_SYSROOT)/lib/crt1.o and qemu-aarch64 or qemu-aarch64-static on PATH)"; \
	  exit 1; \
	fi
	$(Q)$(MAKE) --no-print-directory CROSSCOMPILE=$(AARCH64_PREFIX) BUILD=$(AARCH64_BUILD) \
	  DEBUG=0 SAN= all $(AARCH64_BUILD)/test_runner $(AARCH64_BUILD)/digits_demo \
	  $(AARCH64_BUILD)/vision_driver qnnsets
	$(Q)rm -rf $(AARCH64_EMU_DIR) && mkdir -p $(AARCH64_EMU_DIR)
	$(Q)for lib in $(AARCH64_BUILD)/*.so; do \
	  ln -s ../$${lib##*/} $(AARCH64_EMU_DIR)/$${lib##*/} || exit 1; done
	$(Q)ln -s ../qnnsets $(AARCH64_EMU_DIR)/qnnsets
	$(Q)for prog in htpu htpu-refbuild; do \
	  printf '#!/bin/sh\n# made by make test-aarch64: run the aarch64 %s under qemu-user\n' \
	    $$prog >$(AARCH64_EMU_DIR)/$$prog && \
	  printf 'exec %s "%s" "$$@"\n' "$(AARCH64_EMU)" "$(CURDIR)/$(AARCH64_BUILD)/$$prog" \
	    >>$(AARCH64_EMU_DIR)/$$prog && \
	  chmod +x $(AARCH64_EMU_DIR)/$$prog || exit 1; done
	@echo "  TEST    $(AARCH64_BUILD)/test_runner under $(AARCH64_EMU)"
	HTPU_TEST_BUILD_DIR=$(CURDIR)/$(AARCH64_EMU_DIR) \
	  $(AARCH64_EMU) $(AARCH64_BUILD)/test_runner $(TESTS)
	@echo "  TEST    test/cli/test_htpu.sh $(AARCH64_BUILD) under $(AARCH64_EMU)"
	$(Q)HTPU_TEST_EMU="$(AARCH64_EMU)" bash test/cli/test_htpu.sh $(AARCH64_BUILD)
	$(Q)HTPU_TEST_EMU="$(AARCH64_EMU)" bash test/cli/test_htpu_run.sh $(AARCH64_BUILD)
	$(Q)HTPU_TEST_EMU="$(AARCH64_EMU)" bash test/cli/test_htpu_device.sh $(AARCH64_BUILD)
	$(Q)HTPU_TEST_EMU="$(AARCH64_EMU)" bash test/cli/test_htpu_doctor.sh $(AARCH64_BUILD)
	$(Q)HTPU_TEST_EMU="$(AARCH64_EMU)" bash test/cli/test_htpu_board.sh $(AARCH64_BUILD)
	$(Q)HTPU_TEST_EMU="$(AARCH64_EMU)" bash test/cli/test_htpu_profile.sh $(AARCH64_BUILD)
	$(Q)HTPU_TEST_EMU="$(AARCH64_EMU)" bash test/cli/test_htpu_models.sh $(AARCH64_BUILD)
	$(Q)HTPU_TEST_EMU="$(AARCH64_EMU)" bash test/cli/test_htpu_sets.sh $(AARCH64_BUILD)
	$(Q)HTPU_TEST_EMU="$(AARCH64_EMU)" bash test/cli/test_htpu_detect.sh $(AARCH64_BUILD)
	@echo "  TEST    test/vision/oracle.py: the NEON build against OpenCV, under $(AARCH64_EMU)"
	$(Q)HTPU_TEST_EMU="$(AARCH64_EMU)" bash test/vision/run.sh $(AARCH64_BUILD) "$(VISION_PYTHON)"
	$(Q)HTPU_TEST_EMU="$(AARCH64_EMU)" bash test/cli/test_htpu_load.sh $(AARCH64_BUILD)
	@echo "  DEMO    $(AARCH64_BUILD)/digits_demo under $(AARCH64_EMU)"
	$(Q)$(AARCH64_EMU) $(AARCH64_BUILD)/digits_demo $(AARCH64_BUILD)/libhtpu_refbackend.so \
	  $(AARCH64_BUILD)/libhtpu_refsystem.so $(DIGITS)/digits.bin $(DIGITS)/test_x.f32 \
	  $(DIGITS)/test_y.u8 $(DIGITS)/float_pred.u8
	$(Q)READELF=$(AARCH64_PREFIX)readelf \
	  bash tools/check-glibc.sh --max $(GLIBC_MAX) $(AARCH64_BUILD)

# ---- glibc symbol versions ------------------------------------------------------------------
# 2.34: what the QAIRT 2.42 aarch64 runtime itself needs (the board has 2.43); see
# tools/check-glibc.sh. Checks what is in $(BUILD), builds nothing (building here would use the
# host compiler unless CROSSCOMPILE is given too).
GLIBC_MAX ?= 2.34
check-glibc:
	$(Q)READELF=$(CROSSCOMPILE)readelf bash tools/check-glibc.sh --max $(GLIBC_MAX) $(BUILD)

# check-abi.mk - compare src/qnn/*.h (qnn_abi.h and its parts, qnn_device_abi.h, qnn_htp_abi.h,
# qnn_signal_abi.h, qnn_profile_abi.h and the facts in qnn_versions.h) with a QNN / QAIRT SDK's
# headers (docs/abi.md).
#
#   make check-abi QNN_SDK_ROOT=<sdk>      (<sdk>/include/QNN must hold QnnInterface.h)
#   make check-abi QNN_SDK_ROOT=<sdk> V=1  (also list every passing and skipped check)
#
# Builds test/abi/check_abi.c, one translation unit with the SDK headers and our declarations,
# into $(BUILD)/check-abi and runs it: it prints every mismatch and fails. Then, if
# ABI_CROSS_CC works (default: clang for aarch64, no sysroot needed), the same checks are
# compiled as _Static_asserts for that target. Nothing from the SDK is copied anywhere.

ABI_DIR := $(BUILD)/check-abi
# ABI_SRC: where the qnn/*.h headers are read (override to check a modified copy)
ABI_SRC ?= src
ABI_SDK_INC = $(QNN_SDK_ROOT)/include/QNN
ABI_CFLAGS := -std=c11 -Wall -Wextra -Werror -O0 -g
ABI_CROSS_CC ?= clang --target=aarch64-linux-gnu
ABI_CROSS_FLAGS := -std=c11 -ffreestanding -fsyntax-only -Wall -Wextra -Werror -DABI_STATIC

check-abi:
	$(if $(strip $(QNN_SDK_ROOT)),,$(error check-abi: QNN_SDK_ROOT is not set; \
	  run: make check-abi QNN_SDK_ROOT=<QNN/QAIRT SDK directory containing include/QNN>))
	$(if $(wildcard $(ABI_SDK_INC)/QnnInterface.h),,$(error check-abi: $(QNN_SDK_ROOT) has no \
	  include/QNN/QnnInterface.h; QNN_SDK_ROOT must be the SDK root (the directory holding include/QNN)))
	@mkdir -p $(ABI_DIR)
	@echo "  GEN     $(ABI_DIR) (from $(ABI_SRC)/qnn and $(ABI_SDK_INC))"
	$(Q)sh test/abi/gen_abi_tables.sh $(ABI_DIR) $(ABI_SRC) "$(CC)" -isystem $(ABI_SDK_INC)
	@echo "  CC      $(ABI_DIR)/check_abi"
	$(Q)$(CC) $(ABI_CFLAGS) -I$(ABI_DIR) -Itest/abi -isystem $(ABI_SDK_INC) \
	  test/abi/check_abi.c -o $(ABI_DIR)/check_abi
	$(Q)V=$(V) $(ABI_DIR)/check_abi
	$(Q)if $(ABI_CROSS_CC) -x c -fsyntax-only -ffreestanding /dev/null 2>/dev/null; then \
	  echo "  CHECK   static asserts for: $(ABI_CROSS_CC)"; \
	  $(ABI_CROSS_CC) $(ABI_CROSS_FLAGS) -I$(ABI_DIR) -Itest/abi -isystem $(ABI_SDK_INC) \
	    test/abi/check_abi.c && echo "check-abi: static checks pass for $(ABI_CROSS_CC)"; \
	else echo "check-abi: '$(ABI_CROSS_CC)' not usable, cross-target static checks skipped"; fi

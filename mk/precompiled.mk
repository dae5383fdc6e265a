# precompiled.mk - precompiled NIF artifacts in the layout elixir_make / cc_precompiler use.
#
#   make precompiled [TARGET=aarch64-linux-gnu|x86_64-linux-gnu] [NIF=2.16|2.17]
#                              one archive (defaults: the host, the host VM's NIF version)
#   make precompiled-all       every target for every NIF version (PRECOMPILED_NIFS)
#   make test-precompiled      all of them, then test/precompiled/run.sh: each x86-64 archive
#                              through `mix test` natively on a VM of its NIF version, each
#                              aarch64 one on an arm64 BEAM under qemu-user
#
# For each target this builds `make nif` (mk/nif.mk: hexagon_tpu_nif.so and the reference
# backend - libhtpu_refbackend.so, libhtpu_refsystem.so, ..., htpu-refbuild) with that target's
# compiler into its own priv/ directory, strips the debug info, checks the glibc symbol versions
# (tools/check-glibc.sh, limit GLIBC_MAX) and packs every file of that priv/, at the root of the
# archive (they are extracted into priv/), as
#
#   build/precompiled/hexagon_tpu-nif-<nif_version>-<target>-<version>.tar.gz
#   build/precompiled/checksum.exs     %{"<archive>" => "sha256:<hex>", ...} for every archive
#                                      in build/precompiled (elixir_make's checksum file format)
#
# Compilers: the host gcc for the host's own architecture, else Debian's cross gcc
# "<TARGET>-gcc" (gcc-aarch64-linux-gnu, gcc-x86-64-linux-gnu); PRECOMPILED_CROSSCOMPILE=<prefix->
# overrides. CFLAGS/LDFLAGS from the environment are not used (PRECOMPILED_CFLAGS/_LDFLAGS are):
# an artifact is generic armv8-a / x86-64, not tuned for the build machine or one board.
#
# NIF version: the archive is named after the version the NIF is compiled for, which is
# ERL_NIF_MAJOR_VERSION.ERL_NIF_MINOR_VERSION of the erl_nif.h it is compiled against (the
# ErlNifEntry that nif_init returns carries those two numbers; ERTS loads a NIF whose major
# equals its own and whose minor is not above its own). Two per target:
#   2.16  the host VM's erl_nif.h (ERTS_INCLUDE_DIR, as for `make nif`; Debian 12's OTP 25):
#         loads on OTP 25 to 28
#   2.17  Debian trixie's OTP 27 erl_nif.h, from the private root test/trixie/otp.sh downloads
#         (TRIXIE_OTP_DIR, default build/trixie-otp; network the first time): OTP 26 to 28,
#         with what 2.16 lacks - the halt callback (enif_set_option, ERL_NIF_OPT_ON_HALT)
# The mix.exs compiler takes the newest one the VM can load. The header's version is checked
# against erlang:system_info(nif_version) of the VM the header comes with. The binaries are
# made by the host's toolchains either way (glibc limit as above): only the header differs.
# The aarch64 build uses the x86-64 erl_nif.h too: Debian's arm64 and amd64 erlang-dev headers
# differ only in a comment of erl_int_sizes_config.h (same sizes on both LP64 targets).
#
# Reproducible: files sorted, owner 0, mtime SOURCE_DATE_EPOCH (default: the last commit).

PRECOMPILED_DIR := build/precompiled
PRECOMPILED_APP := hexagon_tpu
PRECOMPILED_TARGETS := x86_64-linux-gnu aarch64-linux-gnu
PRECOMPILED_NIFS := 2.16 2.17
TRIXIE_OTP_DIR ?= build/trixie-otp
# the project version, from mix.exs (@version "x.y.z")
PRECOMPILED_VERSION = $(shell sed -n 's/^ *@version "\([^"]*\)".*/\1/p' mix.exs)
PRECOMPILED_HOST := $(shell uname -m)-linux-gnu
# TARGET as cc_precompiler names it: <arch>-linux-gnu
PRECOMPILED_TARGET = $(or $(TARGET),$(PRECOMPILED_HOST))
PRECOMPILED_CROSSCOMPILE = $(if $(filter $(PRECOMPILED_HOST),$(PRECOMPILED_TARGET)),,$(PRECOMPILED_TARGET)-)
PRECOMPILED_CFLAGS ?=
PRECOMPILED_LDFLAGS ?=
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)

.PHONY: precompiled precompiled-all test-precompiled

# One recipe, one shell: every step needs the same computed names.
precompiled:
	$(Q)set -e; \
	target="$(PRECOMPILED_TARGET)"; \
	case " $(PRECOMPILED_TARGETS) " in *" $$target "*) ;; \
	  *) echo "precompiled: unknown TARGET=$$target (known: $(PRECOMPILED_TARGETS))"; exit 2;; esac; \
	cross="$(PRECOMPILED_CROSSCOMPILE)"; \
	if ! command -v "$${cross}gcc" >/dev/null 2>&1; then \
	  pkg=gcc-$$(echo "$$target" | sed 's/_/-/g'); \
	  echo "precompiled: $${cross}gcc not found (Debian: apt-get install $$pkg)"; exit 1; fi; \
	nifv='io:format("~s", [erlang:system_info(nif_version)]), halt().'; \
	want="$(NIF)"; erl=erl; inc="$(ERTS_INCLUDE_DIR)"; \
	host=$$(erl -noshell -eval "$$nifv"); \
	if [ -n "$$want" ] && [ "$$want" != "$$host" ]; then \
	  case "$$want" in \
	    2.17) erl=$$(bash test/trixie/otp.sh "$(TRIXIE_OTP_DIR)")/erl; \
	          inc="$(TRIXIE_OTP_DIR)/include";; \
	    *) echo "precompiled: NIF=$$want: the host VM is NIF $$host, and only 2.17 comes" \
	         "from elsewhere (trixie's OTP 27); build $$want with a VM of that version"; exit 2;; \
	  esac; fi; \
	major=$$(sed -n 's/^#define ERL_NIF_MAJOR_VERSION \([0-9]*\).*/\1/p' "$$inc/erl_nif.h"); \
	minor=$$(sed -n 's/^#define ERL_NIF_MINOR_VERSION \([0-9]*\).*/\1/p' "$$inc/erl_nif.h"); \
	nif="$$major.$$minor"; \
	case "$$nif" in [0-9]*.[0-9]*) ;; \
	  *) echo "precompiled: no NIF version in $$inc/erl_nif.h"; exit 1;; esac; \
	vm=$$("$$erl" -noshell -eval "$$nifv"); \
	if [ "$$vm" != "$$nif" ]; then \
	  echo "precompiled: $$inc/erl_nif.h is NIF $$nif but the VM ($$erl) is NIF $$vm:" \
	    "ERTS_INCLUDE_DIR and erl come from different OTP installations"; exit 1; fi; \
	version="$(PRECOMPILED_VERSION)"; \
	[ -n "$$version" ] || { echo "precompiled: no @version in mix.exs"; exit 1; }; \
	name="$(PRECOMPILED_APP)-nif-$$nif-$$target-$$version.tar.gz"; \
	stage="$(PRECOMPILED_DIR)/$$target-$$nif"; \
	echo "  NIF     $$target (CROSSCOMPILE=$$cross, NIF $$nif, erl_nif.h from $$inc)"; \
	rm -rf "$$stage/app/priv"; \
	$(MAKE) --no-print-directory CROSSCOMPILE="$$cross" BUILD="$$stage/build" \
	  MIX_APP_PATH="$$stage/app" ERTS_INCLUDE_DIR="$$inc" DEBUG=0 SAN= \
	  CFLAGS="$(PRECOMPILED_CFLAGS)" LDFLAGS="$(PRECOMPILED_LDFLAGS)" nif; \
	files=$$(cd "$$stage/app/priv" && ls | LC_ALL=C sort); \
	for f in $$files; do "$${cross}strip" --strip-debug "$$stage/app/priv/$$f"; done; \
	READELF="$${cross}readelf" bash tools/check-glibc.sh --max $(GLIBC_MAX) "$$stage/app/priv"; \
	echo "  TAR     $(PRECOMPILED_DIR)/$$name"; \
	tar --sort=name --owner=0 --group=0 --numeric-owner --mode=go-w \
	  --mtime=@$(SOURCE_DATE_EPOCH) -C "$$stage/app/priv" -cf - $$files \
	  | gzip -9n >"$(PRECOMPILED_DIR)/$$name.tmp"; \
	mv -f "$(PRECOMPILED_DIR)/$$name.tmp" "$(PRECOMPILED_DIR)/$$name"; \
	(cd $(PRECOMPILED_DIR) && sha256sum "$$name" >"$$name.sha256"); \
	{ echo "%{"; \
	  for a in $$(cd $(PRECOMPILED_DIR) && ls *.tar.gz | LC_ALL=C sort); do \
	    sum=$$(sha256sum "$(PRECOMPILED_DIR)/$$a" | cut -d' ' -f1); \
	    echo "  \"$$a\" => \"sha256:$$sum\","; done; \
	  echo "}"; } >"$(PRECOMPILED_DIR)/checksum.exs"; \
	echo "  SUM     $(PRECOMPILED_DIR)/checksum.exs"

precompiled-all:
	$(Q)for n in $(PRECOMPILED_NIFS); do for t in $(PRECOMPILED_TARGETS); do \
	  $(MAKE) --no-print-directory TARGET=$$t NIF=$$n precompiled || exit 1; done; done

# QEMU_AARCH64 / AARCH64_SYSROOT: mk/cross.mk
test-precompiled: precompiled-all
	$(Q)env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL QEMU_AARCH64="$(QEMU_AARCH64)" \
	  AARCH64_SYSROOT="$(AARCH64_SYSROOT)" TRIXIE_OTP_DIR="$(TRIXIE_OTP_DIR)" \
	  PRECOMPILED_NIFS="$(PRECOMPILED_NIFS)" bash test/precompiled/run.sh $(PRECOMPILED_DIR)

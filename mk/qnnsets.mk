# qnnsets.mk - two fake QAIRT releases for the QNN-set tests (docs/board.md, "QNN sets"): the
# reference backend built with a release's build id and API versions (it then checks that its
# stub and skel are of its release, as a real libQnnHtp.so fails with 14001 when they are not:
# reference/backend/release.c), with the reference system library, a stub library carrying the
# build id (test/qnnset/stub.c) and a skel file carrying it as text. The libraries carry the
# real ones' sonames and RPATH $ORIGIN, so the backend finds its own stub by name as the real
# one does:
#
#   $(BUILD)/qnnsets/2.42/   QAIRT's layout: libQnnHtp.so, libQnnSystem.so,
#                            libQnnHtpV68Stub.so, dsp/libQnnHtpV68Skel.so   (core 2.32, backend 5.42)
#   $(BUILD)/qnnsets/2.48/   ONNX Runtime's flat layout, the skel beside the rest
#                                                                          (core 2.34, backend 5.48)
#
#   make qnnsets      (make test builds them for the tests in test/c and test/cli)

QNNSET_BACKEND_SRC := $(sort $(wildcard reference/backend/*.c))
QNNSET_ID_2.42 := v2.42.0.251225135753_193295
QNNSET_ID_2.48 := v2.48.40.260301120000_197354
QNNSET_API_2.42 := -DRB_RELEASE_CORE_API=2,32,0 -DRB_RELEASE_BACKEND_API=5,42,0 \
                   -DRB_RELEASE_SPEC='"HTPU_REFERENCE:6:2.32.0:5.42.0"'
QNNSET_API_2.48 := -DRB_RELEASE_CORE_API=2,34,0 -DRB_RELEASE_BACKEND_API=5,48,0 \
                   -DRB_RELEASE_SPEC='"HTPU_REFERENCE:6:2.34.0:5.48.0"'
QNNSET_SKEL_2.42 := dsp/
QNNSET_SKEL_2.48 :=
QNNSET_DIR := $(BUILD)/qnnsets
# Linked as QAIRT links its libraries (readelf -d of QAIRT's aarch64 libQnnHtp.so,
# libQnnSystem.so and libQnnHtpV68Stub.so): an RPATH (not RUNPATH) of $ORIGIN, so that what the
# backend opens by name is looked for first beside it, and a soname that is the file's name
# (followed by that soname, as -Wl,-soname takes it).
QNNSET_AS_REAL := -Wl,--disable-new-dtags -Wl,-rpath,'$$ORIGIN' -Wl,-soname,

# $(1): the release
define qnnset_template
QNNSET_OBJ_$(1) := $$(patsubst %.c,$(QNNSET_DIR)/obj-$(1)/%.o,$(QNNSET_BACKEND_SRC))
$(QNNSET_DIR)/obj-$(1)/%.o: %.c
	@mkdir -p $$(dir $$@)
	@$$(if $$(Q),echo "  CC      $$< (release $(1))",true)
	$$(Q)$$(CC) $$(ALL_CFLAGS) $$(INC_reference) -DRB_RELEASE_BUILD_ID='"$(QNNSET_ID_$(1))"' \
	  $(QNNSET_API_$(1)) -c $$< -o $$@
# -Bsymbolic: the library's calls to its own exported functions (htpu_ref_*) stay its own even
# where the ordinary reference backend, a copy of the same code, was loaded into the process
# first with its symbols global (the tests' control API): else unloading this one would run
# the other's teardown.
$(QNNSET_DIR)/$(1)/libQnnHtp.so: $$(QNNSET_OBJ_$(1)) $$(REFMODEL_OBJ) mk/qnnsets.mk
	@mkdir -p $$(dir $$@)
	@$$(if $$(Q),echo "  LD      $$@",true)
	$$(Q)$$(CC) $$(SO_LDFLAGS) $$(ALL_LDFLAGS) -Wl,-Bsymbolic $$(QNNSET_AS_REAL)libQnnHtp.so \
	  -o $$@ $$(sort $$(filter %.o,$$^)) $$(LIBS)
$(QNNSET_DIR)/$(1)/libQnnSystem.so: $$(call obj,$$(wildcard reference/system/*.c)) \
                                    $$(REFMODEL_OBJ) mk/qnnsets.mk
	@mkdir -p $$(dir $$@)
	@$$(if $$(Q),echo "  LD      $$@",true)
	$$(Q)$$(CC) $$(SO_LDFLAGS) $$(ALL_LDFLAGS) $$(QNNSET_AS_REAL)libQnnSystem.so -o $$@ \
	  $$(sort $$(filter %.o,$$^)) $$(LIBS)
$(QNNSET_DIR)/$(1)/libQnnHtpV68Stub.so: test/qnnset/stub.c mk/qnnsets.mk
	@mkdir -p $$(dir $$@)
	@$$(if $$(Q),echo "  LD      $$@",true)
	$$(Q)$$(CC) $$(BASE_CFLAGS) $$(SAN) -DSTUB_BUILD_ID='"$(QNNSET_ID_$(1))"' $$(SO_LDFLAGS) \
	  $$(ALL_LDFLAGS) $$(QNNSET_AS_REAL)libQnnHtpV68Stub.so -o $$@ $$<
$(QNNSET_DIR)/$(1)/$(QNNSET_SKEL_$(1))libQnnHtpV68Skel.so:
	@mkdir -p $$(dir $$@)
	$$(Q)printf 'fake Hexagon v68 skel\0%s\0' '$(QNNSET_ID_$(1))' >$$@
QNNSET_FILES += $(addprefix $(QNNSET_DIR)/$(1)/,libQnnHtp.so libQnnSystem.so \
                  libQnnHtpV68Stub.so $(QNNSET_SKEL_$(1))libQnnHtpV68Skel.so)
endef
$(foreach r,2.42 2.48,$(eval $(call qnnset_template,$(r))))

.PHONY: qnnsets
qnnsets: $(QNNSET_FILES)

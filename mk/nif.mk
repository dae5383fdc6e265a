# nif.mk - the Elixir NIF (c_src/) and what the Mix project ships in priv/.
#
#   make nif MIX_APP_PATH=<_build/ENV/lib/hexagon_tpu> ERTS_INCLUDE_DIR=<erts include dir>
#
# `mix compile` runs this through Mix.Tasks.Compile.HexagonTpuNif (mix.exs) with BUILD set
# under MIX_APP_PATH, so host and Nerves-target objects never mix. It builds, with the same
# strict warnings as the core (and -Werror unless WERROR=0):
#   $(MIX_APP_PATH)/priv/hexagon_tpu_nif.so   c_src/*.c + the core archive, only nif_init exported
#   $(MIX_APP_PATH)/priv/libhtpu_refbackend.so, libhtpu_refsystem.so, libhtpu_refcdsprpc.so,
#                        htpu-refbuild          (the reference backend: `backend: :reference`)
# Without MIX_APP_PATH / ERTS_INCLUDE_DIR (plain `make nif`) they are derived from `erl`.

MIX_APP_PATH ?= $(CURDIR)/_build/dev/lib/hexagon_tpu
ERTS_INCLUDE_DIR ?= $(shell erl -noshell -eval \
  'io:format("~ts/erts-~ts/include", [code:root_dir(), erlang:system_info(version)]), halt().')

NIF_PRIV := $(MIX_APP_PATH)/priv
NIF_SO := $(NIF_PRIV)/hexagon_tpu_nif.so
NIF_SRC := $(sort $(wildcard c_src/*.c))
NIF_OBJ := $(call obj,$(NIF_SRC))
# libhtpu_refcdsprpc.so must sit next to libhtpu_refbackend.so: the reference backend dlopens
# the allocator from its own directory (as libQnnHtp does libcdsprpc.so), and HexagonTpu.Runtime
# passes this same path as `fastrpc_lib`, so the core's rpcmem_* are that initialised instance.
NIF_PRIV_FILES := $(NIF_PRIV)/libhtpu_refbackend.so $(NIF_PRIV)/libhtpu_refsystem.so \
                  $(NIF_PRIV)/libhtpu_refcdsprpc.so $(NIF_PRIV)/htpu-refbuild

# erl_nif.h comes in as a system header: our warnings are for our code, and ERTS's header
# does not promise to be clean under -Wstrict-prototypes/-Wcast-align. A recursive (=)
# target-specific value, so `erl` is only asked for ERTS_INCLUDE_DIR when a NIF object is built.
$(NIF_OBJ): ALL_CFLAGS = $(BASE_CFLAGS) $(SAN) $(CFLAGS) -isystem $(ERTS_INCLUDE_DIR) -Ic_src

.PHONY: nif
nif: $(NIF_SO) $(NIF_PRIV_FILES)

# Plain -shared, not SO_LDFLAGS: the enif_* symbols are resolved by the emulator at load, so
# -z defs cannot apply. --exclude-libs: the core's htpu_* symbols stay inside the NIF, so they
# never interpose on (or get interposed by) the same names in other loaded libraries.
$(NIF_SO): $(NIF_OBJ) $(LIB_A)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@",true)
	$(Q)$(CC) -shared $(ALL_LDFLAGS) -Wl,--exclude-libs,ALL -o $@ $(NIF_OBJ) $(LIB_A) $(LIBS)

$(NIF_PRIV)/%: $(BUILD)/%
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CP      $@",true)
	$(Q)cp -f $< $@

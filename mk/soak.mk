# soak.mk - long runs that check every answer and watch memory and the live handle counters
# (docs/reliability.md).
#
#   make soak         SOAK_EXECUTES (default 1,000,000) executes through the C API
#                     (test/soak/soak.c), then SOAK_PREDICTS (default 200,000) predicts through
#                     Elixir (test/soak/predict_soak.exs); fails on a wrong answer, live counters
#                     not back at baseline, or resident memory growing more than 1% after warm-up
#   make soak-short   the same with 20,000 executes and 20,000 predicts (what CI runs)
#
# The C soak runs the plain build (build/plain: -O2, no sanitizer, whose shadow memory and
# quarantine would swamp the RSS figures); the sanitizers' view of the same calls is
# `make test`. The model is examples/add.txt, built with the project's htpu-refbuild.

SOAK_EXECUTES ?= 1000000
SOAK_PREDICTS ?= 200000
SOAK_BUILD := build/plain
SOAK_MODEL := $(SOAK_BUILD)/soak-add.bin

.PHONY: soak soak-short
soak:
	$(Q)$(MAKE) --no-print-directory BUILD=$(SOAK_BUILD) SAN= all $(SOAK_BUILD)/soak
	$(Q)$(SOAK_BUILD)/htpu-refbuild examples/add.txt $(SOAK_MODEL)
	$(SOAK_BUILD)/soak $(SOAK_BUILD) $(SOAK_MODEL) $(SOAK_EXECUTES)
	env -u MAKEFLAGS -u MFLAGS SOAK_PREDICTS=$(SOAK_PREDICTS) \
	  mix run test/soak/predict_soak.exs $(SOAK_MODEL)

soak-short:
	$(Q)$(MAKE) --no-print-directory soak SOAK_EXECUTES=20000 SOAK_PREDICTS=20000

$(BUILD)/soak: $(call obj,test/soak/soak.c) $(LIB_A)
	@$(if $(Q),echo "  LD      $@",true)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# elixir.mk - the ExUnit suite with the real optional libraries: Nx and :telemetry, built from
# the vendored sources beside the project (../shared/vendor/elixir, never copied into it) into
# build/elixir-libs and put on ERL_LIBS (test/optional/env.sh). `make test` runs the suite
# without them; these run it with them started, where a skipped test is a failure.
#
#   make test-elixir-optional           the suite once (CI)
#   make test-elixir-loop [RUNS=200]    the suite RUNS times, core dumps on, stopping at the
#                                       first failure or crash (log, seed, core kept in
#                                       build/elixir-loop/); HTPU_LOOP_SAN=address builds the
#                                       NIF with AddressSanitizer and preloads libasan
#   HTPU_VENDOR_ELIXIR=<dir>            the vendored sources, if not ../shared/vendor/elixir

RUNS ?= 200

.PHONY: test-elixir-optional test-elixir-loop
test-elixir-optional:
	$(Q)bash test/optional/run.sh

test-elixir-loop:
	$(Q)bash test/optional/loop.sh $(RUNS)

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
#   SECS=60 mix run test/optional/shared_runtime_race.exs
#                                       the shared runtime's lifetime under stress (not a
#                                       make target: it runs for SECS seconds)
#   make test-elixir-trixie             the suite once more on Debian trixie's Elixir 1.18 /
#                                       OTP 27 (test/trixie/: downloaded once into
#                                       build/trixie-otp, run through trixie's own loader),
#                                       Nx/telemetry built by that Elixir, none skipped (CI)
#   make check-format                   mix format --check-formatted with the pinned Elixir
#   make bench-serving [SECS=2]         bench/serving.exs: predict/3 direct and through Nx,
#                                       predict_batch/3, Nx.Serving.batched_run with 1, 8 and
#                                       64 callers (docs/serving.md); a build of its own in
#                                       _build/bench

RUNS ?= 200

.PHONY: test-elixir-optional test-elixir-loop test-elixir-trixie bench-serving
test-elixir-optional:
	$(Q)bash test/optional/run.sh

test-elixir-trixie:
	$(Q)bash test/trixie/run.sh

test-elixir-loop:
	$(Q)bash test/optional/loop.sh $(RUNS)

# Not a test (no timed assertions): prints the figures docs/serving.md quotes. The real Nx as
# for test-elixir-optional (test/optional/env.sh), in a Mix build of its own.
bench-serving:
	$(Q)MIX_BUILD_PATH=$(CURDIR)/_build/bench SECS=$(or $(SECS),2) bash -c \
	  'source test/optional/env.sh && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL mix run bench/serving.exs'

# `mix format --check-formatted` with one pinned Elixir: the formatter's layout changes between
# releases (1.18 lays out several of our files differently from 1.14, and no layout satisfies
# both), so the check is only meaningful with the version the layout was made with: 1.14,
# Debian 12's, which CI installs. With another version it fails and says so.
FORMAT_ELIXIR ?= 1.14

.PHONY: check-format
check-format:
	$(Q)v=$$(elixir --short-version 2>/dev/null); \
	case "$$v" in \
	  $(FORMAT_ELIXIR)|$(FORMAT_ELIXIR).*) env -u MAKEFLAGS -u MFLAGS mix format --check-formatted ;; \
	  *) echo "check-format: the layout is Elixir $(FORMAT_ELIXIR)'s (README, Contributing); this is Elixir $$v"; exit 1 ;; \
	esac

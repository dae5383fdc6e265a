# package.mk - the Hex package, built and used from a fresh project.
#
#   make test-package    copies exactly mix.exs's package[:files] (expanded as `mix hex.build`
#                        expands them) into build/package/hexagon_tpu; a new `mix new` project
#                        depending on it by path builds it and runs predict,
#                        predict_batch, a Serving and a telemetry handler on the reference
#                        backend, with Nx and :telemetry built from ../shared/vendor/elixir
#                        (test/package/run.sh; HTPU_VENDOR_ELIXIR as for test-elixir-optional),
#                        or, with HTPU_PACKAGE_DEPS=hex (the release workflow, where there are
#                        no vendored sources), fetched from Hex into the fresh project

.PHONY: test-package
test-package:
	$(Q)bash test/package/run.sh

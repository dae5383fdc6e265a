# docs.mk - HexDocs: the API reference and every guide in docs/, built and checked.
#
#   make docs        ExDoc 0.36.1, built from the vendored sources beside the project
#                    (../shared/vendor/elixir/build-exdoc.sh, never copied into it) into
#                    build/exdoc once, then `mix docs --warnings-as-errors` with it on ERL_LIBS:
#                    doc/index.html (HTML) and doc/hexagon_tpu.epub, as HexDocs shows them. The
#                    guides, their groups and the module groups are in mix.exs (docs/0).
#   make test-docs   make docs, then test/docs/check.sh: the pages in headless Chromium
#                    (Debian's `chromium`): the main module page and a guide render, the search
#                    finds predict, no console output, every local link resolves; screenshots
#                    in build/docs-check/
#   HTPU_VENDOR_ELIXIR=<dir>   the vendored sources, if not ../shared/vendor/elixir

#
# Nx and :telemetry (the vendored sources, built as test/optional does) are on the code path
# too, so that ExDoc links `Nx.Serving`, `Nx.Batch`, `:telemetry.attach/4` ... to their
# HexDocs (mix.exs docs/0 `deps:`; plain links, nothing fetched). The project is compiled for
# this in a build of its own (_build/docs): what a build records about the code path at
# compile time (Nx.Serving's behaviour is declared when Nx is there) stays out of _build/dev.
# ERL_FLAGS: the vendored Nx's compile-time environment, as test/optional/env.sh explains.

HTPU_VENDOR_ELIXIR ?= $(CURDIR)/../shared/vendor/elixir
EXDOC_LIBS := $(CURDIR)/build/exdoc
DOCS_OPTIONAL_LIBS := $(CURDIR)/build/elixir-libs

.PHONY: docs test-docs
docs:
	$(Q)env -u MIX_BUILD_PATH -u MIX_ENV -u MIX_TARGET bash $(HTPU_VENDOR_ELIXIR)/build-exdoc.sh $(EXDOC_LIBS)
	$(Q)env -u MIX_BUILD_PATH -u MIX_ENV -u MIX_TARGET bash $(HTPU_VENDOR_ELIXIR)/build.sh $(DOCS_OPTIONAL_LIBS)
	$(Q)env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL MIX_BUILD_PATH=$(CURDIR)/_build/docs \
	  ERL_LIBS=$(EXDOC_LIBS):$(DOCS_OPTIONAL_LIBS) \
	  ERL_FLAGS="-nx verify_binary_size true -nx verify_grad true" mix docs --warnings-as-errors

test-docs: docs
	$(Q)bash test/docs/check.sh

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

HTPU_VENDOR_ELIXIR ?= $(CURDIR)/../shared/vendor/elixir
EXDOC_LIBS := $(CURDIR)/build/exdoc

.PHONY: docs test-docs
docs:
	$(Q)env -u MIX_BUILD_PATH -u MIX_ENV -u MIX_TARGET bash $(HTPU_VENDOR_ELIXIR)/build-exdoc.sh $(EXDOC_LIBS)
	$(Q)env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL ERL_LIBS=$(EXDOC_LIBS) mix docs --warnings-as-errors

test-docs: docs
	$(Q)bash test/docs/check.sh

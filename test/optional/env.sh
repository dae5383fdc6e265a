# Sourced by test/optional/*.sh: builds the vendored Nx, Complex and :telemetry (kept beside
# the project in ../shared/vendor/elixir, never copied into it) into a writable directory and
# puts them on ERL_LIBS, so hexagon_tpu starts them as its optional applications.
#   HTPU_VENDOR_ELIXIR  the vendored sources (default: ../shared/vendor/elixir)
#   HTPU_ELIXIR_LIBS    where to build them (default: build/elixir-libs; never inside shared/)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
vendor=${HTPU_VENDOR_ELIXIR:-$root/../shared/vendor/elixir}
libs=${HTPU_ELIXIR_LIBS:-$root/build/elixir-libs}
if [ ! -x "$vendor/build.sh" ] && [ ! -f "$vendor/build.sh" ]; then
  echo "test/optional: no vendored Elixir libraries at $vendor (set HTPU_VENDOR_ELIXIR)" >&2
  exit 2
fi
mkdir -p "$(dirname "$libs")"
libs=$(cd "$(dirname "$libs")" && pwd)/$(basename "$libs")
# Mix's own environment is the project's, not the vendored build's (a MIX_BUILD_PATH set for
# the project would move Nx's _build where build.sh does not look).
env -u MIX_BUILD_PATH -u MIX_ENV -u MIX_TARGET bash "$vendor/build.sh" "$libs"
export ERL_LIBS="$libs${ERL_LIBS:+:$ERL_LIBS}"
# The vendored Nx is built as a root project, so its own config/config.exs (verify_binary_size
# and verify_grad: true) was read at compile time and recorded as compile-time environment.
# Mix validates that record when it loads :nx as one of our applications; giving the runtime
# the same values keeps it consistent (a Hex-built Nx records neither).
export ERL_FLAGS="-nx verify_binary_size true -nx verify_grad true${ERL_FLAGS:+ $ERL_FLAGS}"
# test/test_helper.exs fails the run when Nx or :telemetry is not loadable and started.
export HTPU_REQUIRE_OPTIONAL=1
# A build of its own: what Mix records about the code path at compile time (the application
# tracer's list of known applications) would otherwise be `make test`'s, made without them.
export MIX_BUILD_PATH=${MIX_BUILD_PATH:-$root/_build/optional}
cd "$root"

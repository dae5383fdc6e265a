#!/usr/bin/env bash
# run.sh - the ExUnit suite on Debian trixie's Elixir 1.18 / OTP 27 (test/trixie/otp.sh),
# with the real Nx and :telemetry started, as test/optional/run.sh runs it on the system's
# Elixir. `make test-elixir-trixie` runs this; CI calls that.
#
#  1. trixie's Elixir/OTP in TRIXIE_OTP_DIR (default build/trixie-otp; downloaded once, then
#     reused), first in PATH
#  2. the vendored Nx, Complex and :telemetry built by that Elixir into their own directory
#     (HTPU_ELIXIR_LIBS, default build/elixir-libs-trixie): never the 1.14 build's beams
#  3. `mix compile --warnings-as-errors --force` and `mix test` (every test, none skipped) in
#     their own build path (_build/trixie): the NIF is compiled against OTP 27's erl_nif.h,
#     NIF 2.17, so with the halt callback that the halt test checks
# Arguments go to `mix test`.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
t0=$(date +%s)
bin=$(bash test/trixie/otp.sh "${TRIXIE_OTP_DIR:-$root/build/trixie-otp}")
export PATH="$bin:$PATH"
export HTPU_ELIXIR_LIBS=${HTPU_ELIXIR_LIBS:-$root/build/elixir-libs-trixie}
export MIX_BUILD_PATH=${MIX_BUILD_PATH:-$root/_build/trixie}
# ERTS_INCLUDE_DIR from the caller (make exports the host's) would build a NIF for the wrong VM
unset ERTS_INCLUDE_DIR
vm=$(elixir -e 'IO.write("Elixir #{System.version()}, OTP #{System.otp_release()}, NIF #{:erlang.system_info(:nif_version)}")')
echo "test-elixir-trixie: $vm ($bin)"
case $vm in
  "Elixir 1.18."*", OTP 27, NIF 2.17") ;;
  *) echo "test-elixir-trixie: expected trixie's Elixir 1.18 / OTP 27, got $vm" >&2; exit 1 ;;
esac
(
  source test/optional/env.sh
  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL MIX_ENV=test mix compile --warnings-as-errors --force
)
bash test/optional/run.sh "$@"
echo "test-elixir-trixie: ok ($(($(date +%s) - t0)) s)"

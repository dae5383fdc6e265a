#!/usr/bin/env bash
# The whole ExUnit suite with the real Nx and :telemetry loadable and started (the run
# `make test` does without them is the other half). Arguments go to `mix test`.
# Fails when a test fails or is skipped or excluded, when Nx or :telemetry is not started, or
# when the output does not read clean (test/exunit_clean.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/env.sh"
source "$here/summary.sh"
source "$here/../exunit_clean.sh"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL mix test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
check_summary "$log" || exit 1
[ "$status" = 0 ] || exit "$status"
check_clean "$log"

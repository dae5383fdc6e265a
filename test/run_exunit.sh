#!/usr/bin/env bash
# The ExUnit suite as `make test` runs it (without the optional libraries: the other half is
# test/optional/run.sh), then its output checked to read clean (test/exunit_clean.sh).
# Arguments go to `mix test`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/exunit_clean.sh"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
env -u MAKEFLAGS -u MFLAGS mix test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
[ "$status" = 0 ] || exit "$status"
check_clean "$log"

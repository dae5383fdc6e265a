#!/usr/bin/env bash
# Runs the ExUnit suite RUNS times (default 200) with the real Nx and :telemetry started, core
# dumps on, and stops at the first run that fails or crashes, keeping its log, its seed and its
# core under build/elixir-loop/ (then: gdb "$(erl -noshell -eval 'io:format("~s",
# [code:root_dir()]), halt().')"/erts-*/bin/beam.smp build/elixir-loop/core.N). The core is
# kept where the kernel writes it into the working directory (/proc/sys/kernel/core_pattern
# `core`); where it hands cores to a collector (systemd-coredump, apport), look there.
#   HTPU_LOOP_SAN=address  the NIF and the reference backend built with AddressSanitizer (into
#                          _build/asan) and libasan preloaded into the VM for the runs
# Usage: test/optional/loop.sh [RUNS] [mix test arguments]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-200}
shift || true
source "$here/env.sh"
source "$here/summary.sh"
out=$root/build/elixir-loop
mkdir -p "$out"
ulimit -c unlimited

preload=
if [ "${HTPU_LOOP_SAN:-}" = address ]; then
  export MIX_BUILD_PATH=$root/_build/asan
  preload=$(gcc -print-file-name=libasan.so)
  # The VM frees little at exit by design: leaks are the C tests' business (make test).
  export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:disable_coredump=0:unmap_shadow_on_exit=1
  # Preloaded for the compile too, although the compiler no longer loads the NIF
  # (HexagonTpu.NIF is not autoloaded): make's own tools run under it harmlessly.
  san="-fsanitize=address -fno-omit-frame-pointer"
  CFLAGS="$san" LDFLAGS="-fsanitize=address" env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
    LD_PRELOAD="$preload" MIX_ENV=test mix compile
fi

for i in $(seq 1 "$runs"); do
  log=$out/run.log
  rm -f "$root"/core "$root"/core.[0-9]*
  start=$(date +%s)
  # Chosen here, not by ExUnit, which prints it only at the end: a crash must still name it
  # (`mix test --seed N --trace` then lists the order the tests ran in).
  seed=$(( (RANDOM << 15 | RANDOM) % 1000000 ))
  set +e
  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL ${preload:+LD_PRELOAD=$preload} \
    mix test --seed "$seed" "$@" >"$log" 2>&1
  status=$?
  set -e
  cores=$(ls "$root"/core "$root"/core.[0-9]* 2>/dev/null || true)
  if [ "$status" -ne 0 ] || [ -n "$cores" ] || ! check_summary "$log" >/dev/null; then
    cp "$log" "$out/run.$i.log"
    for c in $cores; do mv "$c" "$out/core.$i"; done
    echo "loop: run $i/$runs FAILED (exit $status, seed $seed); log $out/run.$i.log" \
      "${cores:+core $out/core.$i}" >&2
    tail -30 "$log" >&2
    exit 1
  fi
  echo "loop: run $i/$runs ok ($(( $(date +%s) - start )) s, seed $seed)"
done
echo "loop: $runs runs, no failure and no crash"

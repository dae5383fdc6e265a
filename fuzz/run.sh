#!/usr/bin/env bash
# run.sh - runs libFuzzer targets for a bounded time each (`make fuzz`, mk/fuzz.mk).
#
#   bash fuzz/run.sh BUILD SECONDS TARGET...
#
# Each target runs in BUILD/run/TARGET/ on a fresh copy of fuzz/corpus/TARGET/ (the committed
# seeds are never written), with the libFuzzer flags in $FUZZ_FLAGS and $FUZZ_FLAGS_<target>.
# Whatever it finds (crash-*, leak-*, timeout-*, oom-*) and its log stay in that directory.
# Every target runs even after one fails; the exit status is 1 when any failed. One line per
# target goes to BUILD/run/summary.txt and stdout.
set -uo pipefail
cd "$(dirname "$0")/.."

build=$1 seconds=$2
shift 2
[ $# -gt 0 ] || { echo "run.sh: no targets" >&2; exit 2; }
run=$build/run
mkdir -p "$run"
summary=$run/summary.txt
: >"$summary"
failed=()

stat_of() { sed -n "s/^stat::$1: *//p" "$2" | tail -n 1; }

for t in "$@"; do
  bin=$build/fuzz_$t
  seeds=fuzz/corpus/$t
  if [ ! -x "$bin" ] || [ ! -d "$seeds" ]; then
    echo "fuzz: unknown target '$t' (no $bin or no $seeds)" | tee -a "$summary"
    failed+=("$t")
    continue
  fi
  dir=$run/$t
  rm -rf "$dir" && mkdir -p "$dir/corpus" && cp "$seeds"/* "$dir/corpus/"
  flags_var=FUZZ_FLAGS_$t
  echo "  FUZZ    $t for ${seconds}s: $bin ${FUZZ_FLAGS:-} ${!flags_var:-}"
  # shellcheck disable=SC2086 # the flag lists are word lists
  "$bin" -max_total_time="$seconds" -artifact_prefix="$dir/" ${FUZZ_FLAGS:-} ${!flags_var:-} \
    "$dir/corpus" >"$dir/log.txt" 2>&1
  rc=$?
  execs=$(stat_of number_of_executed_units "$dir/log.txt")
  rate=$(stat_of average_exec_per_sec "$dir/log.txt")
  rss=$(stat_of peak_rss_mb "$dir/log.txt")
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$dir/log.txt" | tail -n 1)
  units=$(find "$dir/corpus" -type f | wc -l)
  if [ $rc -eq 0 ]; then
    result=ok
  else
    result="FAILED (exit $rc; see $dir/log.txt and $(ls "$dir" | grep -E '^(crash|leak|timeout|oom|slow-unit)-' | head -n 1))"
    failed+=("$t")
  fi
  printf '%-11s %s: %s executions (%s/s), %s, corpus %s, peak RSS %s MB\n' "$t" "$result" \
    "${execs:-?}" "${rate:-?}" "${cov:-cov: ?}" "$units" "${rss:-?}" | tee -a "$summary"
  if [ $rc -ne 0 ]; then
    grep -E 'ERROR:|fuzz check failed|live counters|SUMMARY' "$dir/log.txt" | head -n 5
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failed: ${failed[*]}"
  exit 1
fi
echo "fuzz: all targets ran ${seconds}s without a finding"

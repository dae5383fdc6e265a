# Sourced by test/optional/*.sh. check_summary LOG: ExUnit's closing line in LOG must show
# tests, no failure and nothing skipped or excluded (with Nx and :telemetry present, every
# test must run: a skipped one would hide a path that stopped being exercised).
check_summary() {
  local line
  line=$(grep -E '^[0-9]+ (doctests?|tests?|propert(y|ies)),' "$1" | tail -1 || true)
  if [ -z "$line" ]; then
    echo "test/optional: no ExUnit summary in the output" >&2
    return 1
  fi
  if ! grep -qE '[1-9][0-9]* tests?' <<<"$line" || grep -qE '[1-9][0-9]* failures?' <<<"$line"; then
    echo "test/optional: ExUnit: $line" >&2
    return 1
  fi
  if grep -qE '[1-9][0-9]* (skipped|excluded|invalid)' <<<"$line"; then
    echo "test/optional: ExUnit: $line: with Nx and :telemetry present no test may be skipped or excluded" >&2
    return 1
  fi
  echo "test/optional: $line, none skipped"
}

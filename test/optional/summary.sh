# Sourced by test/optional/*.sh. check_summary LOG: ExUnit's closing line in LOG must show
# tests, no failure and nothing skipped or excluded (with Nx and :telemetry present, every
# test must run: a skipped one would hide a path that stopped being exercised), apart from
# tests declared as needing a newer VM (below).
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
  # Excluded: only the tests of real hardware or SDK libraries that the helper declares
  # ("htpu-excluded: TAG: N tests: reason", test/test_helper.exs), never more.
  local excluded allowed
  excluded=$(grep -oE '[0-9]+ excluded' <<<"$line" | cut -d' ' -f1 || true)
  allowed=$(grep -oE 'htpu-excluded: [a-z_]+: [0-9]+ tests' "$1" | grep -oE '[0-9]+ tests' |
    awk '{ n += $1 } END { print n + 0 }')
  if grep -qE '[1-9][0-9]* invalid' <<<"$line" || [ "${excluded:-0}" -gt "${allowed:-0}" ]; then
    echo "test/optional: ExUnit: $line: with Nx and :telemetry present no test may be excluded" \
      "(only the ${allowed:-0} declared by htpu-excluded lines)" >&2
    return 1
  fi
  # The one kind of skip allowed: a test of a VM feature this VM lacks (the OTP 26+ halt
  # callback on OTP 25), declared by printing "htpu-vm-skip: <test>: <reason>" when its module is
  # compiled. Every skipped test must be one of those; any other skip fails the run.
  local skipped declared
  skipped=$(grep -oE '[0-9]+ skipped' <<<"$line" | cut -d' ' -f1 || true)
  # (anywhere on a line: ExUnit's progress dots may precede it)
  declared=$(grep -c 'htpu-vm-skip: ' "$1" || true)
  if [ "${skipped:-0}" -gt "$declared" ]; then
    echo "test/optional: ExUnit: $line: with Nx and :telemetry present no test may be skipped" \
      "(only ${declared} declared as needing a newer VM)" >&2
    return 1
  fi
  if [ "${skipped:-0}" -gt 0 ]; then
    echo "test/optional: $line; skipped only for this VM:"
    grep -o 'htpu-vm-skip: .*' "$1" | sed 's/^htpu-vm-skip: /  /'
  else
    echo "test/optional: $line, none skipped"
  fi
}

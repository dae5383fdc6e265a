# Sourced by test/run_exunit.sh and test/optional/run.sh. check_clean LOG: a green ExUnit run
# must read clean. LOG (the run's output) may hold no compile warning (code that calls an
# optional library is compiled only where it is loadable) and no log line (a test that expects
# a log captures it with ExUnit.CaptureLog and asserts on it). Prints what it found.
check_clean() {
  local bad
  # "warning: " anywhere (ExUnit's dots may precede a compile warning on its line); a Logger
  # line starts with its time ("01:20:52.603 [warning] ..."), an OTP report with "=".
  # A peer node's own report of the crash a distributed test provokes on purpose ("Process ... on
  # node :htpu_peer_... raised an exception") is written to the terminal the VMs share, past
  # every capture of this VM's, and only sometimes (which peer process sees the crash first):
  # not a line of this VM's. Nor is a peer's 'global' warning that it could not connect to
  # another peer the test had just stopped ("'global' at :htpu_peer_b... failed to connect to
  # :htpu_peer_a..."), said by the peer, sometimes, as it goes down too.
  bad=$(grep -nE 'warning: |^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} .*\[(debug|info|notice|warn|warning|error|critical|alert|emergency)\]|^=[A-Z ]+ REPORT====' "$1" |
    grep -vE 'on node :htpu_peer_[A-Za-z0-9_]+@[^ ]+ raised an exception' |
    grep -vE "'global' at :htpu_peer_[A-Za-z0-9_]+@[^ ]+ failed to connect to :htpu_peer_" || true)
  if [ -n "$bad" ]; then
    echo "ExUnit passed, but its output does not read clean (a compile warning or a log line" \
      "no test captured):" >&2
    printf '%s\n' "$bad" | head -20 >&2
    return 1
  fi
}

#!/usr/bin/env bash
# make test-docs: the HexDocs that `make docs` wrote into doc/, opened in headless Chromium
# (Debian's `chromium`) from the files, offline, as a reader's browser would:
#  - the main module page (HexagonTpu) and a guide (serving) render: their content, and the
#    sidebar that the pages' scripts build (module and guide groups), every module in a group;
#  - the search page finds `predict` (HexagonTpu.predict/3 among its results);
#  - no page writes to the console (an exception, a console.error, anything): checked first on
#    a probe page that does write, so a Chromium whose log format changed cannot pass blind;
#  - every local link and resource resolves, in the files and in the DOM after the scripts ran
#    (test/docs/links.exs);
#  - screenshots of both pages in build/docs-check/*.png, to look at.
# CHROMIUM=<program> picks another browser binary.
set -euo pipefail
cd "$(dirname "$0")/../.."
doc=$PWD/doc
out=$PWD/build/docs-check
chromium=${CHROMIUM:-chromium}

command -v "$chromium" >/dev/null || {
  echo "test-docs: no $chromium (Debian: apt-get install chromium)" >&2
  exit 1
}
[ -f "$doc/HexagonTpu.html" ] || { echo "test-docs: no $doc/HexagonTpu.html (make docs)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/dom"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT

# Chromium, headless, on local files only. --no-sandbox: CI runs as root, where Chromium's
# sandbox refuses to start. --virtual-time-budget lets the pages' scripts (sidebar, search
# index) finish in virtual time before the DOM is dumped, without a real wait.
run_chromium() {
  "$chromium" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
    --user-data-dir="$profile" --virtual-time-budget=10000 --enable-logging=stderr --v=0 "$@"
}

# browse PAGE [QUERY]: the page's DOM after its scripts ran -> $out/dom/PAGE, what it wrote to
# the console -> $out/PAGE.console (Chromium logs each console message as a CONSOLE line).
browse() {
  run_chromium --dump-dom "file://$doc/$1${2:-}" >"$out/dom/$1" 2>"$out/$1.log"
  grep -F 'CONSOLE' "$out/$1.log" >"$out/$1.console" || true
}

fail() {
  echo "test-docs: $*" >&2
  exit 1
}

# must PAGE TEXT WHAT: the dumped DOM of PAGE holds TEXT.
must() {
  grep -qF -- "$2" "$out/dom/$1" || fail "$1: $3 (no '$2' in $out/dom/$1)"
}

# The console check can see: a probe page that throws and calls console.error.
cat >"$out/probe.html" <<'EOF'
<html><body><script>console.error("probe error"); undefinedFunction();</script></body></html>
EOF
run_chromium --dump-dom "file://$out/probe.html" >/dev/null 2>"$out/probe.log"
grep -F 'CONSOLE' "$out/probe.log" | grep -qF 'probe error' &&
  grep -F 'CONSOLE' "$out/probe.log" | grep -qF 'undefinedFunction is not defined' ||
  fail "Chromium's log shows no console messages of the probe page ($out/probe.log): the console check would be blind"

browse HexagonTpu.html
must HexagonTpu.html '<title>HexagonTpu — hexagon_tpu v' 'the main module page'
must HexagonTpu.html 'id="predict/3"' 'HexagonTpu.predict/3 documented'
must HexagonTpu.html 'id="modules-full-list"' 'the sidebar (built by the page scripts)'
for group in 'Models and inference' 'Serving' 'Observability' 'Getting started' 'On the board' \
  'Nerves' 'Performance' 'Reliability' 'C API and formats'; do
  must HexagonTpu.html "$group" "the sidebar group '$group'"
done
must HexagonTpu.html 'href="nerves.html"' 'the Nerves guide in the sidebar'

# Every module of the sidebar is in a group (mix.exs @module_groups; `mix docs` refuses a
# documented module in none, this checks what it wrote): ExDoc puts one of no group alone
# at the top, with "group":"" in the sidebar's data.
sidebar=$(ls "$doc"/dist/sidebar_items-*.js 2>/dev/null | head -n 1)
[ -n "$sidebar" ] || fail "no $doc/dist/sidebar_items-*.js (the sidebar's data)"
grep -q '"group":"[^"]' "$sidebar" || fail "$sidebar: no module group at all (its format changed?)"
ungrouped=$({ grep -o '"group":"","id":"[^"]*"' "$sidebar" || true; } | sed 's/.*"id":"//; s/"$//' | tr '\n' ' ')
[ -z "$ungrouped" ] || fail "modules in no sidebar group (mix.exs @module_groups): $ungrouped"

browse serving.html
must serving.html '<title>Batching and serving — hexagon_tpu v' 'the serving guide'
must serving.html '<table>' 'the guide'"'"'s tables'
must serving.html '[:hexagon_tpu, :serving, :queue]' 'the queue length section'

browse search.html '?q=predict'
must search.html 'href="HexagonTpu.html#predict/3"' 'a search for predict finds HexagonTpu.predict/3'

for page in HexagonTpu.html serving.html search.html; do
  if [ -s "$out/$page.console" ]; then
    cat "$out/$page.console" >&2
    fail "$page wrote to the console"
  fi
done

elixir test/docs/links.exs "$doc"
elixir test/docs/links.exs "$doc" "$out/dom"

for page in HexagonTpu serving; do
  run_chromium --window-size=1280,1000 --screenshot="$out/$page.png" "file://$doc/$page.html" \
    2>"$out/$page.screenshot.log"
  # A page that painted nothing is a few hundred bytes of PNG; a rendered one, tens of KB.
  [ "$(stat -c %s "$out/$page.png")" -gt 20000 ] || fail "$out/$page.png: the page painted (almost) nothing"
done

echo "test-docs: main module page, guide and search render in Chromium, no console output," \
  "links resolve; screenshots in $out"

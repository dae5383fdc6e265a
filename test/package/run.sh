#!/usr/bin/env bash
# make test-package: the Hex package, built and used the way a user gets it.
#  1. the file list is mix.exs's package[:files], expanded as `mix hex.build` does
#     (test/package/files.exs), and only those files are copied into build/package/hexagon_tpu;
#  2. a fresh `mix new` project depends on that copy by path, so its `mix compile` builds the
#     NIF and the reference backend from the package's files alone (one build: a `mix compile`
#     in the copy itself would run the same `make nif` a second time);
#  3. with Nx and :telemetry built from the vendored sources onto ERL_LIBS
#     (test/optional/env.sh), the project runs predict, predict_batch, a Serving and a
#     telemetry handler (test/package/user_check.exs), then the README's "In your project"
#     example exactly as the README writes it, which must print exactly what the README says.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../optional/env.sh"   # cd's to the project root
# env.sh's settings for the project's own suite, not for the package or the user project
unset MIX_BUILD_PATH HTPU_REQUIRE_OPTIONAL MIX_ENV MIX_TARGET MAKEFLAGS MFLAGS MAKELEVEL

out=$root/build/package
pkg=$out/hexagon_tpu
user=$out/package_user
rm -rf "$out"
mkdir -p "$pkg"

echo "test-package: the package's files (mix.exs package[:files])"
mix run --no-compile --no-start test/package/files.exs >"$out/files.txt"
while IFS= read -r f; do
  mkdir -p "$pkg/$(dirname "$f")"
  cp -p "$f" "$pkg/$f"
done <"$out/files.txt"
echo "  $(wc -l <"$out/files.txt") files in $pkg"
for f in mix.exs LICENSE CHANGELOG.md Makefile mix/precompiled.exs mk/nif.mk; do
  [ -f "$pkg/$f" ] || { echo "test-package: $f is not in the package" >&2; exit 1; }
done

# checksum.exs: the release workflow puts the release's at the project root before `mix
# hex.publish`, and the package must then carry it (HEXAGON_TPU_PRECOMPILED=download trusts
# only that one). HTPU_PACKAGE_CHECKSUM=1 (the release workflow) requires it, and with
# HTPU_PACKAGE_ARCHIVES=<dir> every archive it names must be one in <dir> with that checksum.
# Without it, the mechanism is still checked: the package's file list of a copy of the project
# with a checksum.exs added names it (test/package/checksum_check.sh).
bash test/package/checksum_check.sh "$pkg" "$out/files.txt"

echo "test-package: a fresh project depending on the package by path"
(cd "$out" && mix new package_user >/dev/null)
sed -i 's|# {:dep_from_hexpm, .*|{:hexagon_tpu, path: "../hexagon_tpu"},|' "$user/mix.exs"
grep -q '{:hexagon_tpu, path: "../hexagon_tpu"}' "$user/mix.exs" || {
  echo "test-package: could not add the dependency to $user/mix.exs" >&2
  exit 1
}
cp test/package/user_check.exs "$user/check.exs"
(cd "$user" && mix run check.exs)

# The README's own example for a user project ("In your project"), as written there: the
# indented block after the marker line, run in the fresh project.
echo "test-package: the README's \"In your project\" example"
example=$(awk '/<!-- test-package runs this block/ { on = 1; next }
  on && /^    / { sub(/^    /, ""); print; seen = 1; next }
  on && seen && /^$/ { print; next }
  on && seen { exit }' README.md)
[ -n "$example" ] || { echo "test-package: no example block after the marker in README.md" >&2; exit 1; }
# All it prints, stdout and stderr: exactly the line the README says (the project was compiled
# by the run above, and a compile with nothing to do prints nothing, make included).
printed=$(cd "$user" && bash -c "$example" 2>&1)
echo "  $printed"
[ "$printed" = "[1.0, 4.0, 9.0, 12.699999809265137]" ] || {
  echo "test-package: the README's example printed this, not only what the README says:" >&2
  printf '%s\n' "$printed" | sed 's/^/  | /' >&2
  exit 1
}

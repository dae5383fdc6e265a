#!/usr/bin/env bash
# make test-package: the Hex package, built and used the way a user gets it.
#  1. the file list is mix.exs's package[:files], expanded as `mix hex.build` does
#     (test/package/files.exs), and only those files are copied into build/package/hexagon_tpu;
#  2. a fresh `mix new` project depends on that copy by path, so its `mix compile` builds the
#     NIF and the reference backend from the package's files alone (one build: a `mix compile`
#     in the copy itself would run the same `make nif` a second time);
#  3. with Nx and :telemetry, the project runs predict, predict_batch, a Serving and a
#     telemetry handler (test/package/user_check.exs), then the README's "In your project"
#     example exactly as the README writes it, which must print exactly what the README says.
#
# Where Nx and :telemetry come from (HTPU_PACKAGE_DEPS):
#   vendored (the default; make test-package here and in CI): built from the vendored sources
#            beside the project onto ERL_LIBS (test/optional/env.sh); no Hex, no network.
#   hex      (the release workflow, on a GitHub runner: no vendored sources there): the fresh
#            project declares them as the README tells a user to, {:nx, "~> 0.7.2"} (the last
#            Nx for Elixir 1.14) and {:telemetry, "~> 1.0"}, and `mix deps.get` fetches them
#            from Hex, as a Hex user's project does.
set -euo pipefail
# The release job's own dev-only dependencies (mix.exs release_deps/0: its HexDocs) are no part
# of the package, nor of what a user's project builds
unset HEXAGON_TPU_HEX_RELEASE
deps_from=${HTPU_PACKAGE_DEPS:-vendored}
case $deps_from in
  vendored)
    source "$(dirname "${BASH_SOURCE[0]}")/../optional/env.sh"   # cd's to the project root
    ;;
  hex)
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    cd "$root"
    ;;
  *)
    echo "test-package: HTPU_PACKAGE_DEPS=$deps_from; expected vendored or hex" >&2
    exit 2
    ;;
esac
# env.sh's settings for the project's own suite, not for the package or the user project
unset MIX_BUILD_PATH HTPU_REQUIRE_OPTIONAL MIX_ENV MIX_TARGET MAKEFLAGS MFLAGS MAKELEVEL

out=$root/build/package
pkg=$out/hexagon_tpu
user=$out/package_user
rm -rf "$out"
mkdir -p "$pkg"

echo "test-package: the package's files (mix.exs package[:files])"
# --no-deps-check: the list needs mix.exs alone, not the release job's dev-only deps compiled
mix run --no-compile --no-deps-check --no-start test/package/files.exs >"$out/files.txt"
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

echo "test-package: a fresh project depending on the package by path (Nx, :telemetry: $deps_from)"
(cd "$out" && mix new package_user >/dev/null)
dep='{:hexagon_tpu, path: "../hexagon_tpu"},'
[ "$deps_from" = hex ] && dep="$dep {:nx, \"~> 0.7.2\"}, {:telemetry, \"~> 1.0\"},"
sed -i "s|# {:dep_from_hexpm, .*|$dep|" "$user/mix.exs"
grep -qF "$dep" "$user/mix.exs" || {
  echo "test-package: could not add the dependencies to $user/mix.exs" >&2
  exit 1
}
if [ "$deps_from" = hex ]; then
  (cd "$user" && mix deps.get)
fi
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

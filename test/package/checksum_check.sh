#!/usr/bin/env bash
# checksum_check.sh PKG FILES - the Hex package carries checksum.exs when the project has one
# (test/package/run.sh, step 1; docs/nerves.md, "Making a release").
#  - checksum.exs at the project root: the laid-out package PKG (its list FILES) must hold it,
#    byte for byte;
#  - HTPU_PACKAGE_CHECKSUM=1 (the release workflow): it must be there; with
#    HTPU_PACKAGE_ARCHIVES=<dir>, each archive it names must be in <dir> with that SHA-256;
#  - otherwise: mix.exs's file list, taken in a copy of the project with a checksum.exs added,
#    must name it (so a release's package would carry it).
set -euo pipefail
pkg=$1
files=$2

if [ -f checksum.exs ]; then
  grep -qx checksum.exs "$files" && cmp -s checksum.exs "$pkg/checksum.exs" || {
    echo "test-package: checksum.exs is at the project root but not in the package" >&2
    exit 1
  }
  echo "  the package carries checksum.exs ($(grep -c sha256 checksum.exs) archives)"
  if [ -n "${HTPU_PACKAGE_ARCHIVES:-}" ]; then
    grep -oE '"[^"]+\.tar\.gz" *=> *"sha256:[0-9a-f]{64}"' checksum.exs | while read -r entry; do
      name=$(sed -E 's/^"([^"]+)".*/\1/' <<<"$entry")
      sum=$(sed -E 's/.*sha256:([0-9a-f]{64}).*/\1/' <<<"$entry")
      got=$(sha256sum "$HTPU_PACKAGE_ARCHIVES/$name" 2>/dev/null | cut -d' ' -f1 || true)
      [ "$got" = "$sum" ] || {
        echo "test-package: checksum.exs names $name (sha256:$sum), not an archive of" \
          "$HTPU_PACKAGE_ARCHIVES" >&2
        exit 1
      }
    done
    echo "  every archive checksum.exs names is in $HTPU_PACKAGE_ARCHIVES, with its checksum"
  fi
  exit 0
fi
if [ "${HTPU_PACKAGE_CHECKSUM:-0}" = 1 ]; then
  echo "test-package: HTPU_PACKAGE_CHECKSUM=1 but there is no checksum.exs at the project" \
    "root: a published package without it cannot install HEXAGON_TPU_PRECOMPILED=download" >&2
  exit 1
fi
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
cp -r mix.exs mix "$copy/"
mkdir -p "$copy/test/package"
cp test/package/files.exs "$copy/test/package/"
printf '%%{}\n' >"$copy/checksum.exs"
# the list only needs the project's files to exist: make them as empty stand-ins
(cd "$copy" && mix run --no-compile --no-deps-check --no-start -e '
  for f <- Mix.Project.config()[:package][:files], f != "checksum.exs", not String.contains?(f, "*") do
    unless File.exists?(f), do: (File.mkdir_p!(Path.dirname(f)); File.write!(f, ""))
  end
  for f <- ["docs/x.md"], do: (File.mkdir_p!(Path.dirname(f)); File.write!(f, ""))
' && mix run --no-compile --no-deps-check --no-start test/package/files.exs) >"$copy/files.txt"
grep -qx checksum.exs "$copy/files.txt" || {
  echo "test-package: with a checksum.exs at the project root, mix.exs's package files do not" \
    "name it: a release's package would not carry it" >&2
  exit 1
}
echo "  with a checksum.exs at its root the package would carry it (checked on a copy)"

#!/usr/bin/env bash
# run.sh DIR - check the precompiled NIF archives in DIR (make precompiled-all puts them in
# build/precompiled; `make test-precompiled` builds them and runs this).
#
#  1. every archive's SHA-256 matches DIR/checksum.exs
#  2. per NIF version (PRECOMPILED_NIFS, default "2.16 2.17") and target (x86-64 natively,
#     aarch64 under qemu-user): unpack; nif_init as nif_entry.c, built for the target, reads it
#     from its own dlopen() (NIF version, module name); every enif_* the NIF imports is declared
#     by the erl_nif_api_funcs.h of that NIF version; the 2.17 NIF imports enif_set_option (the
#     OTP 26+ halt callback); tools/check-glibc.sh prints the newest glibc symbol version each
#     file needs
#  3. x86-64: `mix test` (the ExUnit suite against the reference backend) in a copy of the Elixir
#     project without the C sources, with HEXAGON_TPU_PRECOMPILED=DIR and MAKE=false: the
#     compiler has to take the archive (verify, unpack) since it cannot build. 2.16 on the host's
#     VM (Debian 12, OTP 25); 2.17 on Debian trixie's Elixir 1.18 / OTP 27 (test/trixie/otp.sh,
#     TRIXIE_OTP_DIR), where the halt test (the callback only 2.17 has) must run and pass.
#     Each checks that priv/ holds that archive's files. Then bad inputs must stop `mix compile`
#     with their reason and install nothing: a corrupted archive, code in checksum.exs (never
#     run), an http:// URL, and (on the source build) a damaged stamp.
#  4. aarch64: an arm64 BEAM (Debian's, test/precompiled/arm64-otp.sh, OTP 27) under qemu-user
#     loads each aarch64 NIF and runs smoke.exs (load a model, predict, close) with the archive's
#     reference backend. Needs network the first time (apt's Debian mirror; cached in
#     ARM64_OTP_DIR). HTPU_PRECOMPILED_BEAM=auto (default: skipped with a note when the arm64 VM
#     cannot be had), 1 (required), 0 (skipped).
#
# Environment: QEMU_AARCH64, AARCH64_SYSROOT, AARCH64_PREFIX (as mk/cross.mk), ERTS_INCLUDE_DIR,
# ARM64_OTP_DIR (default build/arm64-otp), TRIXIE_OTP_DIR (default build/trixie-otp),
# GLIBC_MAX (default 2.34), PRECOMPILED_MIX_TEST_ARGS (extra `mix test` arguments, e.g. test
# files).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

dir=$(cd "${1:?usage: run.sh DIR}" && pwd)
qemu=${QEMU_AARCH64:-$(command -v qemu-aarch64 || command -v qemu-aarch64-static || true)}
sysroot=${AARCH64_SYSROOT:-/usr/aarch64-linux-gnu}
a64=${AARCH64_PREFIX:-aarch64-linux-gnu-}
beam_mode=${HTPU_PRECOMPILED_BEAM:-auto}
otp_dir=${ARM64_OTP_DIR:-$root/build/arm64-otp}
glibc_max=${GLIBC_MAX:-2.34}
erts_inc=${ERTS_INCLUDE_DIR:-$(erl -noshell -eval \
  'io:format("~ts/erts-~ts/include", [code:root_dir(), erlang:system_info(version)]), halt().')}
version=$(sed -n 's/^ *@version "\([^"]*\)".*/\1/p' mix.exs)
host_nif=$(erl -noshell -eval 'io:format("~s", [erlang:system_info(nif_version)]), halt().')
nifs=${PRECOMPILED_NIFS:-2.16 2.17}
trixie_dir=${TRIXIE_OTP_DIR:-$root/build/trixie-otp}
mkdir -p "$trixie_dir"
trixie_dir=$(cd "$trixie_dir" && pwd)
# The erl_nif.h directory of a NIF version: the host VM's, or trixie's OTP 27 for 2.17.
nif_include() {
  if [ "$1" = "$host_nif" ]; then echo "$erts_inc"; return; fi
  case $1 in
    2.17) bash test/trixie/otp.sh "$trixie_dir" >/dev/null && echo "$trixie_dir/include" ;;
    *) echo "FAIL: no erl_nif.h for NIF $1 (the host VM is NIF $host_nif)" >&2; return 1 ;;
  esac
}
module=Elixir.HexagonTpu.NIF
# at least these (mk/nif.mk may add more reference-backend files; all are checked)
required="hexagon_tpu_nif.so libhtpu_refbackend.so libhtpu_refsystem.so htpu-refbuild"

work=$(mktemp -d "${TMPDIR:-/tmp}/htpu-precompiled.XXXXXX")
trap 'rm -rf "$work"' EXIT
step() { printf '\n== %s\n' "$*"; }
t0=$(date +%s)

step "checksums ($dir/checksum.exs)"
n=0
while IFS= read -r line; do
  name=$(printf '%s\n' "$line" | sed -n 's/^ *"\([^"]*\)" => "sha256:\([0-9a-f]*\)".*/\1/p')
  want=$(printf '%s\n' "$line" | sed -n 's/^ *"\([^"]*\)" => "sha256:\([0-9a-f]*\)".*/\2/p')
  [ -n "$name" ] || continue
  have=$(sha256sum "$dir/$name" | cut -d' ' -f1)
  if [ "$have" != "$want" ]; then echo "FAIL: $name is $have, checksum.exs says $want"; exit 1; fi
  echo "ok  $name  sha256:$have"
  n=$((n + 1))
done <"$dir/checksum.exs"
[ "$n" -gt 0 ] || { echo "FAIL: no entries in $dir/checksum.exs"; exit 1; }

for nif in $nifs; do
nif_inc=$(nif_include "$nif")
for target in x86_64-linux-gnu aarch64-linux-gnu; do
  archive="$dir/hexagon_tpu-nif-$nif-$target-$version.tar.gz"
  step "$target: $(basename "$archive")"
  [ -f "$archive" ] ||
    { echo "FAIL: missing $archive (make precompiled TARGET=$target NIF=$nif)"; exit 1; }
  priv="$work/$target-$nif/priv"
  mkdir -p "$priv"
  tar -xzf "$archive" -C "$priv"
  for f in $required; do [ -f "$priv/$f" ] || { echo "FAIL: $f not in the archive"; exit 1; }; done
  files=$(tar -tzf "$archive" | LC_ALL=C sort)
  if printf '%s\n' "$files" | grep -qvE '^[A-Za-z0-9][A-Za-z0-9._+-]*$'; then
    echo "FAIL: entries that are not plain file names: $(echo $files)"; exit 1
  fi
  echo "files: $(echo $files)"
  case $target in
    x86_64-*) cc=gcc emu=() readelf=readelf machine="X86-64" ;;
    aarch64-*) cc=${a64}gcc emu=("$qemu" -L "$sysroot") readelf=${a64}readelf machine=AArch64 ;;
  esac
  if [ "$target" = aarch64-linux-gnu ] && [ -z "$qemu" ]; then
    echo "FAIL: no qemu-aarch64 (apt-get install qemu-user)"; exit 1
  fi
  for f in $files; do
    m=$("$readelf" -h "$priv/$f" | sed -n 's/^ *Machine: *//p')
    case $m in *"$machine"*) ;; *) echo "FAIL: $f is '$m', not $machine"; exit 1 ;; esac
  done
  echo "machine: $machine (all $(echo $files | wc -w) files)"

  # what nif_init returns, from the target's own dlopen
  "$cc" -std=c11 -O1 -Wall -Wextra -Werror -isystem "$nif_inc" -o "$work/$target-$nif/nif_entry" \
    test/precompiled/nif_entry.c -ldl
  "${emu[@]}" "$work/$target-$nif/nif_entry" "$priv/hexagon_tpu_nif.so" "$module" "$nif" |
    grep -v '^  '

  # the NIF's imports: every enif_* must be in the NIF API it was compiled against
  imports=$("$readelf" --dyn-syms -W "$priv/hexagon_tpu_nif.so" |
    awk '$7 == "UND" && $8 ~ /^enif_/ { sub(/@.*/, "", $8); print $8 }' | sort -u)
  missing=""
  for s in $imports; do
    grep -q "[ ,(]$s[ ,)]" "$nif_inc/erl_nif_api_funcs.h" || missing="$missing $s"
  done
  [ -z "$missing" ] || { echo "FAIL: not in NIF $nif's API:$missing"; exit 1; }
  echo "imports: $(echo "$imports" | wc -l) enif_* functions, all in $nif_inc/erl_nif_api_funcs.h (NIF $nif)"
  # 2.17 and later: the halt callback (c_src/hexagon_tpu_nif.c, ERL_NIF_OPT_ON_HALT) is set
  case $nif in
    2.1[0-6]) ;;
    *) grep -qx enif_set_option <<<"$imports" ||
         { echo "FAIL: NIF $nif does not import enif_set_option: no halt callback"; exit 1; }
       echo "halt callback: imports enif_set_option" ;;
  esac
  exports=$("$readelf" --dyn-syms -W "$priv/hexagon_tpu_nif.so" |
    awk '$7 != "UND" && $5 == "GLOBAL" && $4 == "FUNC" { print $8 }' | tr '\n' ' ')
  [ "$exports" = "nif_init " ] || { echo "FAIL: exports '$exports', expected only nif_init"; exit 1; }
  echo "exports: nif_init only"

  READELF=$readelf bash tools/check-glibc.sh --max "$glibc_max" "$priv"
done
done

proj="$work/project"
mkdir -p "$proj"
# The copied project has no C sources: the tests that run the htpu command (two processes and
# the NPU lock) take the checkout's, built here (HTPU_TEST_BUILD_DIR).
(cd "$root" && make -s --no-print-directory BUILD=build/plain all)
htpu_dir="$root/build/plain"
cp -R mix.exs mix .formatter.exs lib test models examples "$proj/"
# The QNN-set tests' fake releases (mk/qnnsets.mk) are built here, with the C sources the copy
# has not; the copy's tests find them through HTPU_TEST_QNN_SETS.
make -s --no-print-directory qnnsets BUILD=build/plain
export HTPU_TEST_QNN_SETS="$PWD/build/plain/qnnsets"
case " $nifs " in *" $host_nif "*) ;; *) echo "FAIL: no NIF $host_nif (the host VM's) in '$nifs'"; exit 1 ;; esac
step "x86_64-linux-gnu: NIF $host_nif: mix test on the host's VM with HEXAGON_TPU_PRECOMPILED=$dir (no C sources, MAKE=false)"
ts=$(date +%s)
(cd "$proj" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u TARGET_ARCH -u TARGET_OS \
  HEXAGON_TPU_PRECOMPILED="$dir" HTPU_TEST_BUILD_DIR="$htpu_dir" MAKE=false MIX_ENV=test \
  mix test ${PRECOMPILED_MIX_TEST_ARGS:-})
for f in $(cd "$work/x86_64-linux-gnu-$host_nif/priv" && ls); do
  cmp "$proj/_build/test/lib/hexagon_tpu/priv/$f" "$work/x86_64-linux-gnu-$host_nif/priv/$f"
done
echo "x86_64: priv/ holds the NIF $host_nif archive's files; mix test took $(($(date +%s) - ts)) s"

if [ "$host_nif" != 2.17 ] && [[ " $nifs " == *" 2.17 "* ]]; then
  step "x86_64-linux-gnu: NIF 2.17: mix test on trixie's Elixir 1.18 / OTP 27"
  proj17="$work/project-2.17"
  mkdir -p "$proj17"
  cp -R mix.exs mix .formatter.exs lib test models examples "$proj17/"
  ts=$(date +%s)
  bin17=$(bash test/trixie/otp.sh "$trixie_dir")
  mix17() {
    (cd "$proj17" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u TARGET_ARCH -u TARGET_OS \
      -u ERTS_INCLUDE_DIR -u MIX_BUILD_PATH PATH="$bin17:$PATH" HEXAGON_TPU_PRECOMPILED="$dir" \
      HTPU_TEST_BUILD_DIR="$htpu_dir" MAKE=false MIX_ENV=test mix test "$@")
  }
  log="$work/mix-test-2.17.log"
  mix17 ${PRECOMPILED_MIX_TEST_ARGS:-} 2>&1 | tee "$log"
  grep -q "precompiled hexagon_tpu-nif-2.17-x86_64-linux-gnu-$version.tar.gz unpacked" "$log" ||
    { echo "FAIL: on OTP 27 the compiler did not take the 2.17 archive"; exit 1; }
  for f in $(cd "$work/x86_64-linux-gnu-2.17/priv" && ls); do
    cmp "$proj17/_build/test/lib/hexagon_tpu/priv/$f" "$work/x86_64-linux-gnu-2.17/priv/$f"
  done
  # the halt callback, which only this archive has: its test must run, not be skipped
  out=$(mix17 test/hexagon_tpu/halt_test.exs 2>&1) || { printf '%s\n' "$out"; exit 1; }
  grep -qx '1 test, 0 failures' <<<"$out" ||
    { printf '%s\n' "$out"; echo "FAIL: the halt test did not run and pass on OTP 27"; exit 1; }
  echo "x86_64: priv/ holds the NIF 2.17 archive's files; the halt test passed;" \
    "mix test on OTP 27 took $(($(date +%s) - ts)) s"
fi

# Bad inputs must stop `mix compile` with the reason, and install nothing (the installer's own
# tests, test/mix/precompiled_test.exs, cover each case; these go through the real compiler).
# refused WHAT PATTERN [ENV=VALUE...]: mix compile in the project copy, from a clean priv/.
app="$proj/_build/test/lib/hexagon_tpu"
refused() {
  local what=$1 pattern=$2 out
  shift 2
  rm -rf "$app/priv" "$app/native"
  if out=$(cd "$proj" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u HEXAGON_TPU_PRECOMPILED \
    MAKE=false MIX_ENV=test "$@" mix compile 2>&1); then
    echo "FAIL: mix compile accepted $what"; exit 1
  fi
  printf '%s\n' "$out" | grep -qF -- "$pattern" ||
    { printf '%s\n' "$out"; echo "FAIL: $what: no '$pattern' in the error"; exit 1; }
  [ ! -e "$app/priv/hexagon_tpu_nif.so" ] || { echo "FAIL: $what: a NIF was installed"; exit 1; }
  echo "x86_64: $what is refused: $(printf '%s\n' "$out" | grep -m1 -F -- "$pattern" | cut -c1-160)"
}
archive_name="hexagon_tpu-nif-$host_nif-x86_64-linux-gnu-$version.tar.gz"

# a corrupted archive
bad="$work/tampered"
mkdir -p "$bad"
cp "$dir/$archive_name" "$dir/checksum.exs" "$bad/"
printf 'x' >>"$bad/$archive_name"
refused "a corrupted archive" "does not match checksum.exs" HEXAGON_TPU_PRECOMPILED="$bad"

# a checksum.exs with code in it: read as data, never run
planted="$work/planted"
mkdir -p "$planted"
cp "$dir/$archive_name" "$planted/"
{ echo "File.write!(\"$work/planted-ran\", \"checksum.exs was run\")"; cat "$dir/checksum.exs"; } \
  >"$planted/checksum.exs"
refused "a checksum.exs with code in it" "expected one map of string literals" \
  HEXAGON_TPU_PRECOMPILED="$planted"
[ ! -e "$work/planted-ran" ] || { echo "FAIL: mix compile ran the code in checksum.exs"; exit 1; }

# http:// (nothing listens on port 9; the refusal comes before any connection)
refused "an http:// URL" "http:// is refused" HEXAGON_TPU_PRECOMPILED=http://127.0.0.1:9/release

# a damaged stamp (an empty native/precompiled, as a full disk leaves it), on the source build
rm -rf "$app/native" && mkdir -p "$app/native" && : >"$app/native/precompiled"
out=$(cd "$proj" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u HEXAGON_TPU_PRECOMPILED \
  MAKE=false MIX_ENV=test mix compile 2>&1) && { echo "FAIL: mix compile ignored a damaged stamp"; exit 1; }
printf '%s\n' "$out" | grep -qF "$app/native/precompiled (the record of a precompiled install) is damaged" ||
  { printf '%s\n' "$out"; echo "FAIL: a damaged stamp: unexpected error"; exit 1; }
echo "x86_64: a damaged stamp stops the source build with: $(printf '%s\n' "$out" | grep -m1 -o 'is damaged.*found an empty file')"
rm -rf "$app/native"

step "aarch64-linux-gnu: arm64 BEAM under qemu-user"
if [ "$beam_mode" = 0 ]; then
  echo "skipped (HTPU_PRECOMPILED_BEAM=0)"
else
  if erl_a64=$(QEMU_AARCH64="$qemu" bash test/precompiled/arm64-otp.sh "$otp_dir"); then
    elixir_ebin=$(elixir -e 'IO.puts(:code.lib_dir(:elixir))')/ebin
    for nif in $nifs; do
      app="$work/lib-$nif/hexagon_tpu-$version"
      mkdir -p "$app"
      cp -R "$proj/_build/test/lib/hexagon_tpu/ebin" "$app/ebin"
      cp -R "$work/aarch64-linux-gnu-$nif/priv" "$app/priv"
      # the model, made by the archive's own (aarch64) htpu-refbuild
      "$qemu" -L "$sysroot" "$app/priv/htpu-refbuild" examples/add.txt "$work/add.bin"
      ts=$(date +%s)
      MODEL="$work/add.bin" "$erl_a64" -noshell -pa "$elixir_ebin" -pa "$app/ebin" \
        -s elixir start_cli -extra test/precompiled/smoke.exs
      echo "aarch64: NIF $nif: smoke.exs passed on the arm64 BEAM in $(($(date +%s) - ts)) s"
    done
  elif [ "$beam_mode" = 1 ]; then
    echo "FAIL: no arm64 BEAM (test/precompiled/arm64-otp.sh failed)"; exit 1
  else
    echo "skipped: no arm64 BEAM (arm64-otp.sh failed: no network?); the nif_init check above ran"
  fi
fi

echo
echo "test-precompiled: ok ($(($(date +%s) - t0)) s)"

#!/usr/bin/env bash
# check-glibc.sh [--max X.Y] PATH... - the newest glibc symbol version each ELF file needs.
#
# PATH is an executable, a shared object or a directory (its top-level ELF executables and
# shared objects are checked; object files and archives are not: they carry no version needs).
# For every file prints the highest GLIBC_x.y in its version-needs section (.gnu.version_r),
# then the overall highest, and fails if any file needs more than the maximum (default 2.34,
# or $GLIBC_MAX). A file over the limit is followed by the symbols that pull in the newer
# versions, which is what has to change (or be built against an older glibc).
#
# Why 2.34: the QAIRT 2.42 aarch64 runtime (variant aarch64-oe-linux-gcc11.2) needs at most
# GLIBC_2.34, so a library that stays at or below it runs wherever the QNN libraries do; the
# Dragon Q6A Nerves system has glibc 2.43. Raise the limit with --max when that is not wanted.
#
# Uses readelf (any binutils readelf reads every ELF machine, so the host one checks an aarch64
# build; override with READELF=). Exit: 0 all within the limit, 1 some file over it, 2 usage or
# nothing to check.
set -u

MAX=${GLIBC_MAX:-2.34}
READELF=${READELF:-readelf}

usage() {
  echo "usage: $0 [--max X.Y] FILE_OR_DIR..." >&2
  exit 2
}

while [ $# -gt 0 ]; do
  case $1 in
    --max) [ $# -ge 2 ] || usage; MAX=$2; shift 2 ;;
    --max=*) MAX=${1#--max=}; shift ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    -*) echo "check-glibc: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || usage
if ! [[ $MAX =~ ^[0-9]+\.[0-9]+$ ]]; then
  echo "check-glibc: --max must look like 2.34, got '$MAX'" >&2
  exit 2
fi
if ! command -v "$READELF" >/dev/null 2>&1; then
  echo "check-glibc: '$READELF' not found (Debian: apt-get install binutils)" >&2
  exit 2
fi

# is_elf_image FILE: an ELF executable or shared object (ET_EXEC or ET_DYN)
is_elf_image() {
  [ "$(head -c 4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ] || return 1
  "$READELF" -h "$1" 2>/dev/null | grep -qE 'Type:[[:space:]]+(EXEC|DYN)'
}

FILES=()
for p in "$@"; do
  if [ -d "$p" ]; then
    while IFS= read -r f; do
      is_elf_image "$f" && FILES+=("$f")
    done < <(find "$p" -maxdepth 1 -type f | LC_ALL=C sort)
  elif [ -f "$p" ]; then
    if is_elf_image "$p"; then
      FILES+=("$p")
    else
      echo "check-glibc: $p is not an ELF executable or shared object" >&2
      exit 2
    fi
  else
    echo "check-glibc: $p does not exist" >&2
    exit 2
  fi
done
if [ ${#FILES[@]} -eq 0 ]; then
  echo "check-glibc: no ELF executables or shared objects in: $* (build first?)" >&2
  exit 2
fi

# version_newer A B: A > B, both x.y[.z]
version_newer() {
  [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -n 1)" = "$1" ]
}

OVERALL=""
OVERALL_FILE=""
OVER=0
printf '%-12s %-12s %s\n' "needs" "machine" "file (limit GLIBC_$MAX)"
for f in "${FILES[@]}"; do
  # "Name: GLIBC_2.34  Flags: none  Version: 3" lines of the version-needs section; GLIBC_PRIVATE
  # and other non-numeric names are not release versions and are ignored
  versions=$("$READELF" -V -W "$f" 2>/dev/null | sed -n 's/.*Name: GLIBC_\([0-9][0-9.]*\).*/\1/p' |
    sort -u -V)
  machine=$("$READELF" -h "$f" | sed -n 's/^ *Machine: *//p' | sed 's/^AArch64$/aarch64/;
    s/^Advanced Micro Devices X86-64$/x86-64/')
  if [ -z "$versions" ]; then
    printf '%-12s %-12s %s\n' "(none)" "$machine" "$f"
    continue
  fi
  top=$(printf '%s\n' "$versions" | tail -n 1)
  flag=""
  if version_newer "$top" "$MAX"; then
    flag="  <-- over GLIBC_$MAX"
    OVER=1
  fi
  printf '%-12s %-12s %s%s\n' "GLIBC_$top" "$machine" "$f" "$flag"
  if [ -n "$flag" ]; then
    # the dynamic symbols bound to a version above the limit, e.g. "__isoc23_strtol@GLIBC_2.38"
    "$READELF" --dyn-syms -W "$f" | grep -oE '[^ ]+@GLIBC_[0-9][0-9.]*' | sort -u |
      while IFS= read -r sym; do
        v=${sym##*@GLIBC_}
        if version_newer "$v" "$MAX"; then echo "               needs $sym"; fi
      done
  fi
  if [ -z "$OVERALL" ] || version_newer "$top" "$OVERALL"; then
    OVERALL=$top
    OVERALL_FILE=$f
  fi
done

if [ -z "$OVERALL" ]; then
  echo "check-glibc: no file needs a versioned glibc symbol (static or not linked to glibc)"
  exit 0
fi
if [ $OVER -eq 1 ]; then
  echo "check-glibc: FAIL: highest needed GLIBC_$OVERALL ($OVERALL_FILE) is newer than the" \
    "limit GLIBC_$MAX (raise it with --max / GLIBC_MAX= if the target's glibc allows)"
  exit 1
fi
echo "check-glibc: ok: highest needed GLIBC_$OVERALL ($OVERALL_FILE), limit GLIBC_$MAX"

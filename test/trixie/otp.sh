#!/usr/bin/env bash
# otp.sh DIR - Debian trixie's Elixir 1.18 / Erlang/OTP 27 (x86-64), runnable on this host
# without installing anything: the board's Elixir generation, beside Debian 12's 1.14 / OTP 25.
#
# The approach of test/precompiled/arm64-otp.sh: apt-get download of trixie's packages into a
# private apt state under DIR (the host's apt configuration untouched, nothing installed),
# dpkg-deb -x into DIR/root. Trixie's ERTS needs glibc 2.38 (Debian 12 has 2.36), so trixie's
# own libc6 comes along and every ERTS program (erlexec, beam.smp, erl_child_setup, ...) is
# replaced by a wrapper that runs it through trixie's loader,
#   DIR/root/usr/lib64/ld-linux-x86-64.so.2 --library-path <trixie's libs> <program>
# The library path is the loader's argument, not LD_LIBRARY_PATH: what the VM starts in turn
# (sh, make, gcc, htpu-refbuild through a port) runs as an ordinary host program.
#
# Writes DIR/bin (erl, elixir, elixirc, iex, mix, erlc, escript): put it first in PATH. Reuses
# DIR when it is complete (the downloaded .debs stay in DIR/debs: a rebuild of DIR/root needs
# no network). Needs network (apt's Debian mirror) the first time. Prints DIR/bin on success.
# ERTS_INCLUDE_DIR for NIF builds against OTP 27's erl_nif.h (NIF 2.17): DIR/include (a link).
set -euo pipefail

dir=${1:?usage: otp.sh DIR}
suite=${SUITE:-trixie}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

if [ -f "$dir/.complete" ] && [ -x "$dir/bin/erl" ]; then
  echo "$dir/bin"
  exit 0
fi

# elixir and what its package depends on (mix needs crypto; ExUnit, Logger: runtime_tools),
# erlang-dev for erl_nif.h, and the libraries ERTS links that are older on the host.
pkgs="elixir erlang-base erlang-dev erlang-crypto erlang-inets erlang-parsetools
  erlang-public-key erlang-asn1 erlang-ssl erlang-tools erlang-syntax-tools erlang-runtime-tools
  libc6 libgcc-s1 libstdc++6 libtinfo6 zlib1g libssl3t64"

rm -rf "$dir/root" "$dir/bin" "$dir/.complete"
if [ ! -f "$dir/debs/.complete" ]; then
  rm -rf "$dir/debs"
  mkdir -p "$dir/apt/state/lists/partial" "$dir/apt/cache/archives/partial" "$dir/debs"
  : >"$dir/apt/status"
  echo "deb http://deb.debian.org/debian $suite main" >"$dir/apt/sources.list"
  apt_opts=(-q -o "Dir::State=$dir/apt/state" -o "Dir::Cache=$dir/apt/cache"
    -o "Dir::State::status=$dir/apt/status" -o "Dir::Etc::sourcelist=$dir/apt/sources.list"
    -o Dir::Etc::sourceparts=/nonexistent -o APT::Architecture=amd64
    -o APT::Architectures::=amd64 -o APT::Sandbox::User=root)
  echo "trixie-otp: apt-get update ($suite, amd64, private state in $dir/apt)" >&2
  apt-get "${apt_opts[@]}" update >&2
  # shellcheck disable=SC2086
  (cd "$dir/debs" && apt-get "${apt_opts[@]}" download $pkgs >&2)
  touch "$dir/debs/.complete"
fi
for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done

ld="$dir/root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
libs="$dir/root/usr/lib/x86_64-linux-gnu"
[ -x "$ld" ] || { echo "trixie-otp: no loader at $ld" >&2; exit 1; }
erlroot="$dir/root/usr/lib/erlang"
erts=$(cd "$erlroot" && ls -d erts-* | head -n 1)
bindir="$erlroot/$erts/bin"
wrap() { # wrap FILE: FILE becomes a script running FILE.real through trixie's loader
  mv "$1" "$1.real"
  printf '#!/bin/sh\n# trixie/otp.sh: %s through trixie'"'"'s loader (glibc 2.38+)\nexec "%s" --library-path "%s" --argv0 "$0" "%s" "$@"\n' \
    "$(basename "$1")" "$ld" "$libs" "$1.real" >"$1"
  chmod +x "$1"
}
for prog in beam.smp erlexec erl_child_setup inet_gethost epmd heart erlc escript dyn_erl \
  run_erl to_erl; do
  [ -f "$bindir/$prog" ] && wrap "$bindir/$prog"
done

mkdir -p "$dir/bin"
# erl: Debian's script has ROOTDIR=/usr/lib/erlang written in; this one points into DIR/root.
cat >"$dir/bin/erl" <<EOS
#!/bin/sh
# trixie/otp.sh: $suite's Erlang/OTP ($erts), through trixie's loader
ROOTDIR="$erlroot"
BINDIR="$bindir"
EMU=beam
PROGNAME=erl
export ROOTDIR BINDIR EMU PROGNAME
exec "$bindir/erlexec" "\$@"
EOS
chmod +x "$dir/bin/erl"
# erlexec puts ERTS's own bin directories first in the VM's PATH: an `erl` the VM starts (a
# test's script VM, a peer node) must be this one too.
for f in "$bindir/erl" "$erlroot/bin/erl"; do rm -f "$f" && cp "$dir/bin/erl" "$f"; done
for prog in erlc escript; do ln -s "$bindir/$prog" "$dir/bin/$prog"; done
# The Elixir scripts find their lib/ from their own (resolved) path and start `erl` from PATH.
for prog in elixir elixirc iex mix; do ln -s "$dir/root/usr/lib/elixir/bin/$prog" "$dir/bin/$prog"; done
ln -s "$erlroot/$erts/include" "$dir/include"

PATH="$dir/bin:$PATH" "$dir/bin/elixir" -e 'IO.puts(:stderr, "trixie-otp: Elixir #{System.version()}, OTP #{System.otp_release()}, NIF #{:erlang.system_info(:nif_version)}")' >&2
touch "$dir/.complete"
echo "$dir/bin"

#!/usr/bin/env bash
# arm64-otp.sh DIR - an aarch64 Erlang/OTP that runs on an x86-64 host under qemu-user.
#
# Downloads Debian's arm64 erlang-base and the libraries it links (libc6, libgcc-s1,
# libstdc++6, libtinfo6, zlib1g) with apt-get download, into a private apt state under DIR (no
# dpkg --add-architecture, nothing installed, the host's apt configuration untouched), unpacks
# them with dpkg-deb -x into DIR/root, and puts wrappers in front of the ERTS programs so that
# every exec the VM makes of one of them (erlexec -> beam.smp, beam.smp -> erl_child_setup)
# goes through qemu-aarch64 -L DIR/root: without binfmt_misc the kernel cannot exec them.
# Writes DIR/erl, which starts that VM. Reuses DIR when it is complete. Needs network (apt's
# Debian mirror) the first time. Prints DIR/erl on success.
#
# Suite: trixie (OTP 27, NIF 2.17 - the NIF version of OTP 26 to 28, so of the board's OTP 28).
# Not bookworm: its OTP 25 JIT maps code twice (a writable and an executable view); qemu-user
# does not see writes through the writable view and runs stale code (segfault at boot), and
# OTP 25 has no +JMsingle to turn that off. OTP 27 has it: DIR/erl passes +JMsingle true.
# SUITE=<name> OTP_EXTRA_PKGS="..." for another suite (e.g. sid: OTP 29, needs libsctp1 libatomic1).
set -euo pipefail

dir=${1:?usage: arm64-otp.sh DIR}
suite=${SUITE:-trixie}
qemu=${QEMU_AARCH64:-$(command -v qemu-aarch64 || command -v qemu-aarch64-static || true)}
[ -n "$qemu" ] || { echo "arm64-otp: no qemu-aarch64 (apt-get install qemu-user)" >&2; exit 1; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

if [ -x "$dir/erl" ] && [ -f "$dir/.complete" ]; then
  echo "$dir/erl"
  exit 0
fi

rm -rf "$dir/root" "$dir/debs" "$dir/.complete"
mkdir -p "$dir/apt/state/lists/partial" "$dir/apt/cache/archives/partial" "$dir/debs"
: >"$dir/apt/status"
echo "deb http://deb.debian.org/debian $suite main" >"$dir/apt/sources.list"
apt_opts=(-q -o "Dir::State=$dir/apt/state" -o "Dir::Cache=$dir/apt/cache"
  -o "Dir::State::status=$dir/apt/status" -o "Dir::Etc::sourcelist=$dir/apt/sources.list"
  -o Dir::Etc::sourceparts=/nonexistent -o APT::Architecture=arm64
  -o APT::Architectures::=arm64 -o APT::Sandbox::User=root)
echo "arm64-otp: apt-get update ($suite, arm64, private state in $dir/apt)" >&2
apt-get "${apt_opts[@]}" update >&2
# shellcheck disable=SC2086
(cd "$dir/debs" && apt-get "${apt_opts[@]}" download erlang-base libc6 libgcc-s1 libstdc++6 \
  libtinfo6 zlib1g ${OTP_EXTRA_PKGS:-} >&2)
for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done
# merged-/usr packages: the program interpreter is /lib/ld-linux-aarch64.so.1
[ -e "$dir/root/lib" ] || ln -s usr/lib "$dir/root/lib"

erts=$(cd "$dir/root/usr/lib/erlang" && ls -d erts-* | head -n 1)
bindir="$dir/root/usr/lib/erlang/$erts/bin"
for prog in beam.smp erlexec erl_child_setup inet_gethost epmd; do
  [ -f "$bindir/$prog" ] || continue
  mv "$bindir/$prog" "$bindir/$prog.aarch64"
  printf '#!/bin/sh\n# arm64-otp.sh: run the aarch64 %s under qemu-user\nexec "%s" -L "%s" "%s" "$@"\n' \
    "$prog" "$qemu" "$dir/root" "$bindir/$prog.aarch64" >"$bindir/$prog"
  chmod +x "$bindir/$prog"
done

cat >"$dir/erl" <<EOS
#!/bin/sh
# arm64-otp.sh: the $suite arm64 BEAM ($erts) under qemu-user
ROOTDIR="$dir/root/usr/lib/erlang"
BINDIR="$bindir"
EMU=beam
PROGNAME=erl
export ROOTDIR BINDIR EMU PROGNAME
exec "$bindir/erlexec" +JMsingle true "\$@"
EOS
chmod +x "$dir/erl"
"$dir/erl" -noshell -eval 'io:format(standard_error, "arm64-otp: OTP ~s, NIF ~s, ~s~n",
  [erlang:system_info(otp_release), erlang:system_info(nif_version),
   erlang:system_info(system_architecture)]), halt().' >&2
touch "$dir/.complete"
echo "$dir/erl"

#!/usr/bin/env bash
# CI: the aarch64 build and tests under qemu-user (make test-aarch64, see mk/cross.mk).
# Installs the Debian cross toolchain and emulator when missing, then runs the target. About
# 20 s on 2 cores once the packages are installed (the install: ~56 MB download, ~270 MB on
# disk, ~20 s).
set -euo pipefail
cd "$(dirname "$0")/.."

export DEBIAN_FRONTEND=noninteractive
# gcc-aarch64-linux-gnu brings binutils-aarch64-linux-gnu (ar); libc6-dev-arm64-cross brings the
# aarch64 glibc that qemu-aarch64 loads with -L /usr/aarch64-linux-gnu; qemu-user is the
# emulator (qemu-user-static, which provides qemu-aarch64-static, is accepted instead).
need=()
for pkg in make gcc-aarch64-linux-gnu libc6-dev-arm64-cross; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if ! dpkg -s qemu-user >/dev/null 2>&1 && ! dpkg -s qemu-user-static >/dev/null 2>&1; then
  need+=(qemu-user)
fi
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "test-aarch64.sh: missing ${need[*]}; run as root or: sudo apt-get install ${need[*]}" >&2
    exit 1
  fi
  echo "test-aarch64.sh: installing ${need[*]}"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

make test-aarch64

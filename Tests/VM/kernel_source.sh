#!/bin/bash
# For the out-of-tree module builds (build_vkms.sh, build_gpio_sim.sh): picks the test kernel and prints
# "KERNEL SERIES SOURCE-TARBALL" on one line; with --install it first makes sure Debian's linux-source package and
# that kernel's headers are installed (as root; only when missing).
# Usage: kernel_source.sh [--install] [KERNEL-VERSION]   (default: the newest /boot/vmlinuz-*)
set -euo pipefail
install=
if [ "${1:-}" = --install ]; then
    install=yes
    shift
fi
kernel=${1:-}
if [ -z "$kernel" ]; then
    newest=$(find /boot -maxdepth 1 -name 'vmlinuz-*' | sort -V | tail -n 1)
    kernel=${newest#/boot/vmlinuz-}
fi
series=$(cut -d. -f1,2 <<<"$kernel")
source_tar=/usr/src/linux-source-$series.tar.xz
missing=()
[ -n "$install" ] || { echo "$kernel $series $source_tar"; exit 0; }
[ -f "$source_tar" ] || missing+=("linux-source-$series")
[ -d "/lib/modules/$kernel/build" ] || missing+=("linux-headers-$kernel")
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing ${missing[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null ||
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; }
fi
echo "$kernel $series $source_tar"

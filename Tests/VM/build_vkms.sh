#!/bin/bash
# Builds vkms.ko, the virtual KMS driver with a real (timer-driven) vblank, for the test kernel: Debian's kernel
# does not build it (CONFIG_DRM_VKMS is off), so it is compiled out of tree from Debian's linux-source package
# against the kernel's headers. Installs both packages when they are missing (as root). Prints the module's path;
# the build is kept under /tmp/vitrine-vm/vkms-KERNEL and reused.
# Usage: build_vkms.sh [KERNEL-VERSION]   (default: the newest /boot/vmlinuz-*)
set -euo pipefail
kernel=${1:-}
if [ -z "$kernel" ]; then
    newest=$(find /boot -maxdepth 1 -name 'vmlinuz-*' | sort -V | tail -n 1)
    kernel=${newest#/boot/vmlinuz-}
fi
out=/tmp/vitrine-vm/vkms-$kernel
if [ -f "$out/vkms.ko" ]; then
    echo "$out/vkms.ko"
    exit 0
fi
series=$(cut -d. -f1,2 <<<"$kernel")
source_tar=/usr/src/linux-source-$series.tar.xz
missing=()
[ -f "$source_tar" ] || missing+=("linux-source-$series")
[ -d "/lib/modules/$kernel/build" ] || missing+=("linux-headers-$kernel")
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing ${missing[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null ||
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; }
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xJf "$source_tar" -C "$work" "linux-source-$series/drivers/gpu/drm/vkms"
make -s -C "/lib/modules/$kernel/build" M="$work/linux-source-$series/drivers/gpu/drm/vkms" CONFIG_DRM_VKMS=m \
    modules >&2
mkdir -p "$out"
cp "$work/linux-source-$series/drivers/gpu/drm/vkms/vkms.ko" "$out/vkms.ko.tmp"
mv "$out/vkms.ko.tmp" "$out/vkms.ko"
echo "$out/vkms.ko"

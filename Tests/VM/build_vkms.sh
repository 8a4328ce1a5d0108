#!/bin/bash
# Builds vkms.ko, the virtual KMS driver with a real (timer-driven) vblank, for the test kernel: Debian's kernel
# does not build it (CONFIG_DRM_VKMS is off), so it is compiled out of tree from Debian's linux-source package
# against the kernel's headers. Installs both packages when they are missing (as root). Prints the module's path;
# the build is kept under /tmp/vitrine-vm/vkms-KERNEL and reused.
# Usage: build_vkms.sh [KERNEL-VERSION]   (default: the newest /boot/vmlinuz-*)
set -euo pipefail
read -r kernel series source_tar < <("$(dirname "$0")/kernel_source.sh" "${1:-}")
out=/tmp/vitrine-vm/vkms-$kernel
if [ -f "$out/vkms.ko" ]; then
    echo "$out/vkms.ko"
    exit 0
fi
"$(dirname "$0")/kernel_source.sh" --install "$kernel" >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xJf "$source_tar" -C "$work" "linux-source-$series/drivers/gpu/drm/vkms"
make -s -C "/lib/modules/$kernel/build" M="$work/linux-source-$series/drivers/gpu/drm/vkms" CONFIG_DRM_VKMS=m \
    modules >&2
mkdir -p "$out"
cp "$work/linux-source-$series/drivers/gpu/drm/vkms/vkms.ko" "$out/vkms.ko.tmp"
mv "$out/vkms.ko.tmp" "$out/vkms.ko"
echo "$out/vkms.ko"

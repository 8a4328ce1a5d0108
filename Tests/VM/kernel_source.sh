# shellcheck shell=bash
# Sourced by the out-of-tree module builds (build_vkms.sh, build_gpio_sim.sh): picks the test kernel and makes
# sure Debian's linux-source package and that kernel's headers are installed (as root).
# After `kernel_source [KERNEL-VERSION]`: $kernel (default: the newest /boot/vmlinuz-*), $series (e.g. 6.1) and
# $source_tar (the linux-source tarball).
kernel_source() {
    kernel=${1:-}
    if [ -z "$kernel" ]; then
        local newest
        newest=$(find /boot -maxdepth 1 -name 'vmlinuz-*' | sort -V | tail -n 1)
        kernel=${newest#/boot/vmlinuz-}
    fi
    series=$(cut -d. -f1,2 <<<"$kernel")
    source_tar=/usr/src/linux-source-$series.tar.xz
}

# Installs the source package and the kernel's headers when either is missing.
install_kernel_source() {
    local missing=()
    [ -f "$source_tar" ] || missing+=("linux-source-$series")
    [ -d "/lib/modules/$kernel/build" ] || missing+=("linux-headers-$kernel")
    if [ ${#missing[@]} -gt 0 ]; then
        echo "installing ${missing[*]}" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null ||
            { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; }
    fi
}

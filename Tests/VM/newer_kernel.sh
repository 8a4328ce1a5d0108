#!/bin/bash
# A guest kernel whose vkms offers Y'CbCr planes (NV12, YUV420 and more on every plane, with COLOR_ENCODING and
# COLOR_RANGE), as vc4 on a Raspberry Pi does: vkms gained them after Linux 6.12, and Debian 12's 6.1 and 13's 6.12
# have none. Debian's newest kernel from trixie-backports is unpacked into a folder of its own (nothing is installed
# on the host) and vkms, which Debian does not build, is compiled out of tree from that kernel's linux-source with
# the kernel's own .config and Module.symvers (made ready with this machine's gcc: the packaged kbuild tools need a
# newer glibc). The version is whatever trixie-backports has today, not pinned: Debian removes superseded
# backports from its mirror. The suite's InRelease is verified with debian-archive-keyring, and every download
# against the sha256 it leads to.
# Prints "VERSION ROOT": ROOT/usr/lib/modules/VERSION holds vmlinuz, the modules (vkms under extra/) and the
# modules.dep made by depmod. Kept under /tmp/vitrine-vm/newer and reused. Needs root for the build packages.
# Usage: newer_kernel.sh
set -euo pipefail
cache=/tmp/vitrine-vm/newer
mirror=http://deb.debian.org/debian
suite=trixie-backports
mkdir -p "$cache"

index=$cache/Packages
if [ ! -s "$index" ] || [ -n "$(find "$index" -mmin +720)" ]; then
    curl -fsS --retry 3 -o "$cache/InRelease" "$mirror/dists/$suite/InRelease"
    gpgv --keyring /usr/share/keyrings/debian-archive-keyring.gpg --output "$cache/Release" "$cache/InRelease" 2>/dev/null ||
        { echo "$suite's InRelease does not verify with debian-archive-keyring" >&2; exit 1; }
    curl -fsS --retry 3 -o "$index.xz" "$mirror/dists/$suite/main/binary-amd64/Packages.xz"
    sum=$(awk '/^SHA256:/{on=1; next} /^[^ ]/{on=0} on && $3 == "main/binary-amd64/Packages.xz" {print $1}' \
        "$cache/Release")
    echo "$sum  $index.xz" | sha256sum --quiet -c - >&2
    xz -dc "$index.xz" >"$index.tmp"
    mv "$index.tmp" "$index"
fi
# "Package Version Filename SHA256" per package.
table=$(awk '/^Package: /{p=$2} /^Version: /{v=$2} /^Filename: /{f=$2} /^SHA256: /{s=$2}
             /^$/{if (p) print p, v, f, s; p=""}' "$index")
# The newest kernel whose linux-source is there at the same package version (the mirror may have one before the
# other for a while).
version=
while read -r candidate; do
    package_version=$(awk -v p="linux-image-$candidate" '$1 == p {print $2}' <<<"$table" | tail -n 1)
    source_version=$(awk -v p="linux-source-$(cut -d. -f1,2 <<<"$candidate")" '$1 == p {print $2}' <<<"$table" |
        tail -n 1)
    if [ -n "$package_version" ] && [ "$package_version" = "$source_version" ]; then
        version=$candidate
        break
    fi
done < <(awk '$1 ~ /^linux-image-[0-9.]+\+deb[0-9.]+-amd64$/ {sub(/^linux-image-/, "", $1); print $1}' <<<"$table" |
    sort -V -r)
[ -n "$version" ] || { echo "no linux-image-*-amd64 in $suite with its linux-source" >&2; exit 1; }
root=$cache/$version
modules=$root/usr/lib/modules/$version
if [ -f "$modules/extra/vkms.ko" ] && [ -f "$modules/modules.dep" ]; then
    echo "$version $root"
    exit 0
fi

missing=()
for tool in flex:flex bison:bison depmod:kmod bc:bc curl:curl xz:xz-utils; do
    command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
done
[ -f /usr/include/gelf.h ] || missing+=(libelf-dev)
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing ${missing[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${missing[@]}" >/dev/null ||
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; }
fi

fetch() { # package -> path of its checked .deb
    local line file sum
    line=$(awk -v p="$1" '$1 == p' <<<"$table" | tail -n 1)
    [ -n "$line" ] || { echo "$1 is not in $suite" >&2; return 1; }
    read -r _ _ file sum <<<"$line"
    if [ ! -f "$cache/${file##*/}" ]; then
        curl -fsS --retry 3 -o "$cache/${file##*/}.part" "$mirror/$file"
        echo "$sum  $cache/${file##*/}.part" | sha256sum --quiet -c - >&2
        mv "$cache/${file##*/}.part" "$cache/${file##*/}"
    fi
    echo "$cache/${file##*/}"
}

series=$(cut -d. -f1,2 <<<"$version")
work=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root"
for package in "linux-binary-$version" "linux-modules-$version" "linux-base-$version"; do
    dpkg-deb -x "$(fetch "$package")" "$work/root"
done
dpkg-deb -x "$(fetch "linux-headers-$version")" "$work/headers"
dpkg-deb --fsys-tarfile "$(fetch "linux-source-$series")" |
    tar -x -C "$work" "./usr/src/linux-source-$series.tar.xz"
tar -xJf "$work/usr/src/linux-source-$series.tar.xz" -C "$work"
rm "$work/usr/src/linux-source-$series.tar.xz"
source=$work/linux-source-$series
cp "$work/headers/usr/src/linux-headers-$version/.config" "$work/headers/usr/src/linux-headers-$version/Module.symvers" \
    "$source/"
# Unsigned: the kernel does not insist (MODULE_SIG_FORCE is off) and Debian's key is not ours.
sed -i 's/^CONFIG_MODULE_SIG_ALL=y/# CONFIG_MODULE_SIG_ALL is not set/; s/^CONFIG_MODULE_SIG_KEY=.*/CONFIG_MODULE_SIG_KEY=""/' \
    "$source/.config"
local_version=${version#"${version%%[+-]*}"}
make -s -C "$source" olddefconfig LOCALVERSION="$local_version" >&2
release=$(make -s -C "$source" kernelrelease LOCALVERSION="$local_version")
[ "$release" = "$version" ] || { echo "the source says $release, the kernel is $version" >&2; exit 1; }
make -s -C "$source" -j"$(nproc)" modules_prepare LOCALVERSION="$local_version" >&2
make -s -C "$source" -j"$(nproc)" M=drivers/gpu/drm/vkms CONFIG_DRM_VKMS=m modules LOCALVERSION="$local_version" >&2
mkdir -p "$work/root/usr/lib/modules/$version/extra"
cp "$source/drivers/gpu/drm/vkms/vkms.ko" "$work/root/usr/lib/modules/$version/extra/"
ln -s usr/lib "$work/root/lib"
depmod -b "$work/root" "$version"
rm -rf "$root"
mv "$work/root" "$root"
echo "$version $root"

#!/usr/bin/env bash
# Builds vitrine_VERSION_ARCH.deb with dpkg-deb from a release binary: the binary, the units, the web remote's
# page, the device table, the place index, the default config as a conffile, and the maintainer scripts (the
# `vitrine` user and its groups, the service enabled and started; on upgrade restarted once; on purge its state
# removed). Runtime dependencies come from dpkg-shlibdeps for the libraries the binary links, plus the libraries it
# loads when a feature is first used (MQTT, the web remote, HEIF, clips), which Debian's tools cannot see.
set -euo pipefail
umask 022

usage() {
    cat <<'EOF'
Usage: deploy/make-deb.sh --binary PATH [--version VERSION] [--out DIR]

  --binary PATH      the release binary (swift build -c release --static-swift-stdlib)
  --version VERSION  the package's version (default: the binary's own, from vitrine --version, with -1)
  --out DIR          where the .deb goes (default: .build/deb)
EOF
}
die() {
    printf 'make-deb.sh: %s\n' "$*" >&2
    exit 1
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
binary=
version=
out=$repo/.build/deb
while [ $# -gt 0 ]; do
    case $1 in
    --binary | --version | --out)
        [ $# -ge 2 ] || die "$1 needs a value (see --help)"
        case $1 in
        --binary) binary=$2 ;;
        --version) version=$2 ;;
        --out) out=$2 ;;
        esac
        shift 2
        ;;
    -h | --help)
        usage
        exit 0
        ;;
    *) die "unknown argument $1 (see --help)" ;;
    esac
done
if [ -z "$binary" ] || [ ! -x "$binary" ]; then die "--binary: give the release binary (make release builds it)"; fi
for tool in dpkg-deb dpkg-shlibdeps fakeroot gzip; do
    command -v "$tool" >/dev/null || die "$tool is missing (apt install dpkg-dev fakeroot)"
done
if [ -z "$version" ]; then
    # The binary's own version, as the first Debian revision.
    version=$("$binary" --version | awk '{ print $2 }')-1
fi
[[ $version =~ ^[0-9][A-Za-z0-9.+~-]*$ ]] || die "version '$version' is not a Debian version"
arch=$(dpkg --print-architecture)

work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT
tree=$work/tree
mkdir -p "$tree/DEBIAN" "$tree/usr/bin" "$tree/lib/systemd/system" "$tree/etc/vitrine" \
    "$tree/usr/share/vitrine/web" "$tree/usr/share/doc/vitrine" "$tree/usr/share/man/man1"

install -m 0755 "$binary" "$tree/usr/bin/vitrine"
# Debian's binaries ship without their symbol tables (lintian: unstripped-binary-or-object).
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$tree/usr/bin/vitrine"

# The unit as deploy/ has it, with the packaged binary's path.
sed 's#^ExecStart=/usr/local/bin/vitrine #ExecStart=/usr/bin/vitrine #' "$here/vitrine.service" \
    >"$tree/lib/systemd/system/vitrine.service"
grep -q '^ExecStart=/usr/bin/vitrine ' "$tree/lib/systemd/system/vitrine.service" ||
    die "$here/vitrine.service: no ExecStart=/usr/local/bin/vitrine line to rewrite"
install -m 0644 "$here/vitrine-console.service" "$tree/lib/systemd/system/vitrine-console.service"
chmod 0644 "$tree/lib/systemd/system/vitrine.service"

# The default config, with the library where the unit lets the player read it, and no device table of its own:
# the player's built-in one, or an /etc/vitrine/devices.json an admin writes.
python3 - "$repo/Config/vitrine.json" "$tree/etc/vitrine/vitrine.json" <<'PYTHON' || die "could not write the packaged config"
import json, sys
config = json.load(open(sys.argv[1]))
config["library"] = "/srv/vitrine"
config.pop("deviceTable", None)
with open(sys.argv[2], "w") as f:
    json.dump(config, f, indent=2, ensure_ascii=False)
    f.write("\n")
PYTHON
chmod 0644 "$tree/etc/vitrine/vitrine.json"

# Found beside the binary ($prefix/share/vitrine): the page, the device table for reference (the player has the
# same one built in; /etc/vitrine/devices.json, when an admin writes one, wins), the place index.
for page in index.html app.js style.css openapi.json; do
    install -m 0644 "$repo/web/$page" "$tree/usr/share/vitrine/web/$page"
done
install -m 0644 "$repo/Config/devices.json" "$tree/usr/share/vitrine/devices.json"
install -m 0644 "$repo/data/places.vgeo" "$tree/usr/share/vitrine/places.vgeo"

cat >"$tree/usr/share/doc/vitrine/copyright" <<'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: vitrine
Source: https://github.com/vitrine-frame/vitrine

Files: *
Copyright: 2026 The Vitrine authors
License: Apache-2.0

Files: usr/share/vitrine/places.vgeo
Copyright: GeoNames (https://www.geonames.org/)
License: CC-BY-4.0
 The place names are GeoNames' cities500 data, licensed under the Creative Commons Attribution 4.0 License
 (https://creativecommons.org/licenses/by/4.0/).

License: Apache-2.0
 On Debian systems, the full text of the Apache License, Version 2.0 can be found in
 /usr/share/common-licenses/Apache-2.0.
EOF
chmod 0644 "$tree/usr/share/doc/vitrine/copyright"
# A package built outside Debian's archive closes no bug in it.
mkdir -p "$tree/usr/share/lintian/overrides"
printf 'vitrine: initial-upload-closes-no-bugs\n' >"$tree/usr/share/lintian/overrides/vitrine"
chmod 0644 "$tree/usr/share/lintian/overrides/vitrine"
gzip -9n <"$here/vitrine.1" >"$tree/usr/share/man/man1/vitrine.1.gz"
chmod 0644 "$tree/usr/share/man/man1/vitrine.1.gz"
{
    printf 'vitrine (%s) bookworm; urgency=medium\n\n' "$version"
    printf '  * Built from the Vitrine repository (see its README).\n\n'
    # The date is the binary's: two builds of one binary make the same package.
    printf ' -- Vitrine <vitrine-frame@users.noreply.github.com>  %s\n' "$(date -R -u -d "@$(stat -c %Y "$binary")")"
} | gzip -9n >"$tree/usr/share/doc/vitrine/changelog.Debian.gz"
chmod 0644 "$tree/usr/share/doc/vitrine/changelog.Debian.gz"

# The libraries the binary links, as dpkg-shlibdeps finds their packages; it wants a debian/control to read.
mkdir -p "$work/shlibs/debian"
printf 'Source: vitrine\n\nPackage: vitrine\nArchitecture: any\n' >"$work/shlibs/debian/control"
linked=$(cd "$work/shlibs" && dpkg-shlibdeps -O "$tree/usr/bin/vitrine" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$linked" ] || die "dpkg-shlibdeps found no dependencies for $binary"
# Loaded by soname when a feature is first used (CLazyLink): what the show needs is a dependency; the syncs'
# libraries (libsmbclient brings Samba, about 30 MB) only a suggestion, as `sources` are.
loaded="libheif1, libdav1d6, libinput10, libmosquitto1, libmicrohttpd12, libqrencode4, libfreetype6, fonts-dejavu-core"
loaded+=", libavformat59, libavcodec59, libavutil57, libswscale6, libswresample4, libasound2"
installed_size=$(du -sk --exclude=DEBIAN "$tree" | cut -f1)
cat >"$tree/DEBIAN/control" <<EOF
Package: vitrine
Version: $version
Architecture: $arch
Maintainer: Vitrine <vitrine-frame@users.noreply.github.com>
Installed-Size: $installed_size
Depends: $linked, $loaded, adduser, init-system-helpers (>= 1.52)
Suggests: libcurl4, libexpat1, libsmbclient
Section: graphics
Priority: optional
Homepage: https://github.com/vitrine-frame/vitrine
Description: slideshow player for photo frames and kiosks (DRM/KMS)
 Vitrine plays photos and clips full screen on a Linux board without X11 or
 Wayland: it drives the screen through DRM/KMS, sizes its memory to the board
 (a Raspberry Pi Zero 2 W has 512 MB), and runs from boot as a service. It
 talks to Home Assistant over MQTT, to TVs over HDMI-CEC, to buttons and
 motion sensors over GPIO, and to phones through a web remote.
EOF
printf '/etc/vitrine/vitrine.json\n' >"$tree/DEBIAN/conffiles"

cat >"$tree/DEBIAN/postinst" <<'EOF'
#!/bin/sh
# The service user and its groups, the library folder, and the service enabled and (re)started once.
set -e

if [ "$1" = configure ]; then
    if ! getent passwd vitrine >/dev/null; then
        adduser --system --group --quiet --no-create-home --home /nonexistent vitrine
    fi
    # The screen, the input devices, the render node and (Raspberry Pi OS's gpio group) the GPIO chips.
    for group in video input render gpio; do
        if getent group "$group" >/dev/null; then
            adduser --quiet vitrine "$group" >/dev/null
        fi
    done
    # The photos; never emptied or removed by the package (Debian ships nothing in /srv itself).
    if [ ! -e /srv/vitrine ]; then
        mkdir -p /srv/vitrine
        chmod 0755 /srv/vitrine
    fi
fi

if [ "$1" = configure ] || [ "$1" = abort-upgrade ] || [ "$1" = abort-deconfigure ] || [ "$1" = abort-remove ]; then
    deb-systemd-helper unmask vitrine.service >/dev/null || true
    if deb-systemd-helper --quiet was-enabled vitrine.service; then
        deb-systemd-helper enable vitrine.service >/dev/null || true
    else
        deb-systemd-helper update-state vitrine.service >/dev/null || true
    fi
    if [ -d /run/systemd/system ]; then
        systemctl --system daemon-reload >/dev/null || true
        # A new install starts the show; an upgrade restarts it once, with the new binary (prerm left it running).
        if [ -n "$2" ]; then
            deb-systemd-invoke restart vitrine.service >/dev/null || true
        else
            deb-systemd-invoke start vitrine.service >/dev/null || true
        fi
    fi
fi
exit 0
EOF

cat >"$tree/DEBIAN/prerm" <<'EOF'
#!/bin/sh
# Removal stops the show (the console comes back on tty1); an upgrade leaves it playing until postinst restarts it.
set -e
if [ -d /run/systemd/system ] && [ "$1" = remove ]; then
    deb-systemd-invoke stop vitrine.service >/dev/null || true
fi
exit 0
EOF

cat >"$tree/DEBIAN/postrm" <<'EOF'
#!/bin/sh
# Purge removes what the player kept (its position, stars, caches in /var/lib/vitrine); the photos in /srv/vitrine
# stay. The user stays too, as Debian does with system users (its files might be elsewhere).
set -e
if [ -d /run/systemd/system ]; then
    systemctl --system daemon-reload >/dev/null || true
fi
if [ "$1" = remove ]; then
    deb-systemd-helper mask vitrine.service >/dev/null || true
fi
if [ "$1" = purge ]; then
    deb-systemd-helper purge vitrine.service >/dev/null || true
    deb-systemd-helper unmask vitrine.service >/dev/null || true
    rm -rf /var/lib/vitrine /var/lib/private/vitrine
fi
exit 0
EOF
chmod 0755 "$tree/DEBIAN/postinst" "$tree/DEBIAN/prerm" "$tree/DEBIAN/postrm"

(cd "$tree" && find . -path ./DEBIAN -prune -o -type f -print0 | sort -z | xargs -0 md5sum | sed 's#  \./#  #') \
    >"$tree/DEBIAN/md5sums"
chmod 0644 "$tree/DEBIAN/md5sums" "$tree/DEBIAN/control" "$tree/DEBIAN/conffiles"

mkdir -p "$out"
package=$out/vitrine_${version}_$arch.deb
fakeroot dpkg-deb -Zxz --build "$tree" "$package" >/dev/null
printf '%s\n' "$package"

#!/usr/bin/env bash
# Installs Vitrine as a boot service (see deploy/README.md): the binary, the systemd units, the config, the
# `vitrine` user and the library folder. A manifest with a checksum per file it wrote lets --uninstall take away
# exactly what was added, and lets a later run tell a config the admin edited (kept, the new one written beside it
# as *.dist) from one it may replace. Running it twice changes nothing the second time.
set -euo pipefail
# Everything written here is read by the service user (and the library by the admin): no stricter umask.
umask 022

usage() {
    cat <<'EOF'
Usage: deploy/install.sh [--root DIR] [--binary PATH] [--library DIR] [--web] [--sources] [--no-packages]
       deploy/install.sh --uninstall [--root DIR]

Installs /usr/local/bin/vitrine, /etc/systemd/system/vitrine.service (and its helper vitrine-console.service),
/etc/vitrine/vitrine.json and /etc/vitrine/devices.json, the web remote's page and the place index for {place}
captions under /usr/local/share/vitrine, creates the system user `vitrine` and the library folder, and enables
the service (in the running system also starts it).

  --root DIR      install into the tree DIR (an image or a mounted SD card) instead of /; also taken from
                  $DESTDIR. Nothing outside DIR is touched: no packages, no systemctl on the host; the user is
                  created in DIR/etc/passwd (useradd --prefix) when that file exists.
  --binary PATH   install this vitrine binary instead of building one (swift build -c release
                  --static-swift-stdlib in this checkout)
  --library DIR   the photo library folder, as the target sees it (default /srv/vitrine); created when missing
                  (owned by $SUDO_USER when set), never emptied or removed
  --web           turn on the web remote (port 8080) in a new config, and let the service write the library
                  (uploads, hide, delete): the unit gets ReadWritePaths= for it, and a library created here
                  belongs to the vitrine user and group (mode 2775)
  --sources       for photos synced from Nextcloud, a NAS or a PC (`sources` in the config): the libraries the
                  syncs load (libcurl, expat, libsmbclient), and a library the service may write, as with --web
  --no-packages   do not install the Debian packages Vitrine needs
  --uninstall     remove what an earlier run installed; edited configs and the library are kept (and listed)
  -h, --help      this text
EOF
}

die() {
    printf 'install.sh: %s\n' "$*" >&2
    exit 1
}
say() { printf '%s\n' "$*"; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")

RUNTIME_PACKAGES=(libjpeg62-turbo zlib1g libdrm2 libudev1 libinput10 libfreetype6 libspng0 libwebp7 libwebpdemux2
    libheif1 libdav1d6 liblcms2-2 libgpiod2 libmosquitto1 libmicrohttpd12 libqrencode4 fonts-dejavu-core
    libavformat59 libavcodec59 libavutil57 libswscale6 libswresample4 libasound2)
# Loaded by `vitrine sync` only; libsmbclient brings Samba's libraries (about 30 MB), so only with --sources.
SOURCES_PACKAGES=(libcurl4 libexpat1 libsmbclient)
BUILD_PACKAGES=(pkg-config libstdc++-12-dev libjpeg62-turbo-dev libturbojpeg0-dev zlib1g-dev libdrm-dev libudev-dev
    libinput-dev libfreetype-dev libspng-dev libwebp-dev libheif-dev libdav1d-dev liblcms2-dev libgpiod-dev
    libmosquitto-dev libmicrohttpd-dev libqrencode-dev libcurl4-openssl-dev libexpat1-dev libsmbclient-dev
    libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev libasound2-dev)

BIN=/usr/local/bin/vitrine
UNIT_DIR=/etc/systemd/system
UNIT=$UNIT_DIR/vitrine.service
HELPER=$UNIT_DIR/vitrine-console.service
WANTS_DIR=$UNIT_DIR/multi-user.target.wants
CONF_DIR=/etc/vitrine
CONFIG=$CONF_DIR/vitrine.json
DEVICES=$CONF_DIR/devices.json
SHARE=/usr/local/share/vitrine
MANIFEST=$SHARE/manifest
STATE_DIR=/var/lib/vitrine
USER_NAME=vitrine

root=${DESTDIR:-}
binary=
library=/srv/vitrine
packages=true
uninstall=false
web=false
sources=false
while [ $# -gt 0 ]; do
    case $1 in
    --root | --binary | --library)
        [ $# -ge 2 ] || die "$1 needs a value (see --help)"
        case $1 in
        --root) root=$2 ;;
        --binary) binary=$2 ;;
        --library) library=$2 ;;
        esac
        shift 2
        ;;
    --root=*) root=${1#*=} && shift ;;
    --binary=*) binary=${1#*=} && shift ;;
    --library=*) library=${1#*=} && shift ;;
    --no-packages) packages=false && shift ;;
    --web) web=true && shift ;;
    --sources) sources=true && shift ;;
    --uninstall) uninstall=true && shift ;;
    -h | --help)
        usage
        exit 0
        ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
done

# R is prefixed to every target path: empty for the running system.
if [ -n "$root" ]; then
    mkdir -p -- "$root"
    root=$(cd -- "$root" && pwd -P)
fi
[ "$root" = / ] && root=
R=$root
if [ -z "$R" ]; then
    [ "$(id -u)" -eq 0 ] || die "installing into the running system needs root: run it with sudo"
fi
running_systemd=false
[ -z "$R" ] && [ -d /run/systemd/system ] && running_systemd=true

work=$(mktemp -d)
probe=$(mktemp -d)
trap 'rm -rf -- "$work" "$probe"' EXIT

sum() {
    local line
    line=$(sha256sum <"$1")
    printf '%s' "${line%% *}"
}

# What an earlier run recorded: files with the checksum of what it wrote, folders it created, the user it made.
declare -A recorded=()
old_dirs=()
old_user=
old_group=
old_library=
if [ -f "$R$MANIFEST" ]; then
    while read -r kind a b; do
        case $kind in
        file) recorded[$b]=$a ;;
        dir) old_dirs+=("$a") ;;
        user) old_user=$a ;;
        group) old_group=$a ;;
        library) old_library=$a ;;
        esac
    done <"$R$MANIFEST"
fi

# This run's record, written to the manifest at the end.
files=()
declare -A file_sums=()
changed=false       # the binary, a unit or a config was written: a running player is restarted
units_changed=false # a unit file was written: systemd has to reload
dirs=()
user_created=
record_file() {
    [ -n "${file_sums[$1]+set}" ] || files+=("$1")
    file_sums[$1]=$2
}

# Creates the folder and any missing parents (mode 0755), remembering each one created so --uninstall can remove
# it again when it is empty.
ensure_dir() {
    local path=$1 prefix='' part
    local -a parts
    IFS=/ read -r -a parts <<<"${path#/}"
    for part in "${parts[@]}"; do
        prefix=$prefix/$part
        [ -d "$R$prefix" ] && continue
        mkdir -m 0755 -- "$R$prefix"
        dirs+=("$prefix")
        say "created $R$prefix/"
    done
}

# Writes SOURCE's content to TARGET under a temporary name in the same folder, then renames it: a running binary
# or a reader of the config never sees half a file.
write_file() {
    local source=$1 target=$2 mode=$3 temporary
    temporary=$(dirname -- "$target")/.$(basename -- "$target").install-$$
    cp -- "$source" "$temporary"
    chmod "$mode" "$temporary"
    [ "$(id -u)" -ne 0 ] || chown 0:0 "$temporary"
    mv -f -- "$temporary" "$target"
}

# Removes a *.dist this installer wrote earlier once it is no longer needed (unless someone changed it).
drop_dist() {
    local dist=$1.dist
    [ -n "${recorded[$dist]:-}" ] && [ -f "$R$dist" ] || return 0
    if [ "$(sum "$R$dist")" = "${recorded[$dist]}" ]; then
        rm -f -- "$R$dist"
        say "removed $R$dist (the installed file is up to date)"
    fi
}

note_change() {
    changed=true
    case $1 in *.service) units_changed=true ;; esac
}

# install_file SOURCE TARGET MODE binary|config
# A binary is always brought up to date. A config is replaced only when it is still what this installer wrote
# (its checksum is in the manifest); otherwise it is kept and the new version goes beside it as TARGET.dist.
install_file() {
    local source=$1 target=$2 mode=$3 kind=$4
    local host=$R$target new current old=${recorded[$target]:-}
    new=$(sum "$source")
    if [ ! -e "$host" ] && [ ! -L "$host" ]; then
        write_file "$source" "$host" "$mode"
        record_file "$target" "$new"
        note_change "$target"
        say "installed $host"
        drop_dist "$target"
        return
    fi
    [ -f "$host" ] || die "$host exists and is not a regular file: move it away and run again"
    current=$(sum "$host")
    if [ "$current" = "$new" ]; then
        if [ "$(stat -c %a -- "$host")" != "$mode" ]; then
            chmod "$mode" -- "$host"
            say "set mode $mode on $host"
        fi
        if [ -n "$old" ]; then
            record_file "$target" "$new"
        else
            say "$host is already as the installer would write it (it was there before: --uninstall keeps it)"
        fi
        drop_dist "$target"
    elif [ "$kind" = binary ] || [ "$current" = "$old" ]; then
        write_file "$source" "$host" "$mode"
        record_file "$target" "$new"
        note_change "$target"
        say "updated $host"
        drop_dist "$target"
    else
        # Keep tracking what was installed, so --uninstall also sees the file as edited and keeps it.
        [ -z "$old" ] || record_file "$target" "$old"
        local dist=$target.dist why="it was edited after it was installed"
        [ -n "$old" ] || why="it was not written by this installer"
        if [ ! -f "$R$dist" ] || [ "$(sum "$R$dist")" != "$new" ]; then
            write_file "$source" "$R$dist" "$mode"
            say "wrote $R$dist"
        fi
        record_file "$dist" "$new"
        say "kept $host ($why); this version's is $R$dist: compare the two and merge what you need"
    fi
}

in_root_group() { grep -q "^$1:" "$R/etc/group" 2>/dev/null; }
group_exists() {
    if [ -z "$R" ]; then getent group "$1" >/dev/null; else in_root_group "$1"; fi
}
user_exists() {
    if [ -z "$R" ]; then getent passwd "$1" >/dev/null; else grep -q "^$1:" "$R/etc/passwd"; fi
}

# ---------------------------------------------------------------------------------------------------------------
uninstall() {
    [ -f "$R$MANIFEST" ] || die "$R$MANIFEST not found: nothing here was installed by install.sh"
    local kept=() kind sum_or_path path host i
    if $running_systemd; then
        # Stopping gives tty1 back through vitrine-console.service; the getty is also asked for here in case the
        # helper is gone already (an interrupted uninstall).
        systemctl disable --now vitrine.service || true
        if systemctl -q is-enabled getty@tty1.service 2>/dev/null; then
            systemctl --no-block --job-mode=fail start getty@tty1.service || true
        fi
    elif [ -L "$R$WANTS_DIR/vitrine.service" ]; then
        if command -v systemctl >/dev/null; then
            systemctl --root="${R:-/}" disable vitrine.service
        else
            rm -f -- "$R$WANTS_DIR/vitrine.service"
            say "removed $R$WANTS_DIR/vitrine.service"
        fi
    fi
    while read -r kind sum_or_path path; do
        [ "$kind" = file ] || continue
        host=$R$path
        if [ ! -e "$host" ]; then
            say "$host is already gone"
        elif [ -f "$host" ] && [ "$(sum "$host")" = "$sum_or_path" ]; then
            rm -f -- "$host"
            say "removed $host"
        else
            kept+=("$host (edited since it was installed)")
        fi
    done <"$R$MANIFEST"
    if [ -n "$old_user" ]; then
        if ! user_exists "$old_user"; then
            say "user $old_user is already gone"
        elif [ -z "$R" ]; then
            userdel "$old_user"
            say "removed user $old_user"
        else
            userdel --prefix "$R" "$old_user"
            say "removed user $old_user from $R/etc/passwd"
        fi
    fi
    # userdel removes the user's own group only where login.defs says USERGROUPS_ENAB (not in a bare tree).
    if [ -n "$old_group" ] && group_exists "$old_group"; then
        if [ -z "$R" ]; then groupdel "$old_group"; else groupdel --prefix "$R" "$old_group"; fi
        say "removed group $old_group${R:+ from $R/etc/group}"
    fi
    if [ -n "$old_user" ]; then
        # systemd made it for the service (StateDirectory=); Vitrine keeps nothing there.
        if [ -d "$R$STATE_DIR" ] && rmdir -- "$R$STATE_DIR" 2>/dev/null; then
            say "removed $R$STATE_DIR/"
        fi
    fi
    rm -f -- "$R$MANIFEST"
    say "removed $R$MANIFEST"
    for ((i = ${#old_dirs[@]} - 1; i >= 0; i--)); do
        host=$R${old_dirs[i]}
        [ -d "$host" ] || continue
        if rmdir -- "$host" 2>/dev/null; then
            say "removed $host/"
        else
            kept+=("$host/ (not empty)")
        fi
    done
    if [ -n "$old_library" ] && [ -d "$R$old_library" ]; then
        kept+=("$R$old_library/ (the library: $(find "$R$old_library" -type f | wc -l) files)")
    fi
    ! $running_systemd || systemctl daemon-reload
    if [ ${#kept[@]} -gt 0 ]; then
        say "kept:"
        printf '  %s\n' "${kept[@]}"
    fi
    say "Vitrine is uninstalled${R:+ from $R}."
}

if $uninstall; then
    uninstall
    exit 0
fi

# ---------------------------------------------------------------------------------------------------------------
# The library path goes into JSON and into the unit file unquoted: keep it to characters neither has to escape.
library=$(printf '%s' "$library" | tr -s /)
[ "$library" = / ] || library=${library%/}
[[ $library =~ ^/[A-Za-z0-9._@+/-]+$ ]] ||
    die "--library '$library': use an absolute path of letters, digits and . _ @ + - / only"
[[ /$library/ != */../* && /$library/ != */./* ]] || die "--library '$library': no . or .. components"

# Debian packages: the runtime libraries, and the headers too when this run builds the binary.
if [ -z "$R" ] && $packages; then
    wanted=("${RUNTIME_PACKAGES[@]}")
    ! $sources || wanted+=("${SOURCES_PACKAGES[@]}")
    [ -n "$binary" ] || wanted+=("${BUILD_PACKAGES[@]}")
    if command -v dpkg-query >/dev/null; then
        missing=()
        for package in "${wanted[@]}"; do
            dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
        done
        if [ ${#missing[@]} -gt 0 ]; then
            say "installing packages: ${missing[*]}"
            apt-get update -qq
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
        fi
    else
        say "not a Debian system: make sure these (or their equivalents) are installed: ${wanted[*]}"
    fi
fi

# The binary: the one given, else a release build of this checkout (as the checkout's owner, so .build does not
# end up owned by root).
if [ -z "$binary" ]; then
    [ -f "$repo/Package.swift" ] || die "no --binary given and $repo is not the Vitrine checkout to build"
    swift=$(command -v swift) ||
        die "no --binary given and swift is not in PATH: install Swift (https://swift.org/install)," \
            "or build elsewhere and pass --binary (under sudo, PATH is reset: sudo env PATH=\"\$PATH\" $0)"
    owner=$(stat -c %U -- "$repo")
    build=("$swift" build --package-path "$repo" -c release --static-swift-stdlib)
    say "building $repo/.build/release/vitrine: ${build[*]}"
    if [ "$(id -u)" -eq 0 ] && [ "$owner" != root ] && command -v runuser >/dev/null; then
        runuser -u "$owner" -- "${build[@]}"
    else
        "${build[@]}"
    fi
    binary=$repo/.build/release/vitrine
fi
if [ ! -f "$binary" ] || [ ! -x "$binary" ]; then die "$binary is not an executable file"; fi
binary=$(cd -- "$(dirname -- "$binary")" && pwd -P)/$(basename -- "$binary")
# A binary just built (or handed over) is run here only as an unprivileged user, never as root: as nobody, from a
# copy in a folder nobody can read (the build may sit under /root).
chmod 755 "$probe"
cp -- "$binary" "$probe/vitrine"
unprivileged() {
    if [ "$(id -u)" -eq 0 ] && command -v runuser >/dev/null && id nobody >/dev/null 2>&1; then
        runuser -u nobody -- "$@"
    else
        "$@"
    fi
}
# It runs here when it answers --version as vitrine does (a tree may be for another architecture).
runs_here=false
if version=$(unprivileged "$probe/vitrine" --version 2>/dev/null) && [[ $version == vitrine* ]]; then
    runs_here=true
fi
if [ -z "$R" ]; then
    $runs_here || die "$binary does not run on this machine as vitrine (another architecture, or libraries" \
        "missing?): $(unprivileged "$probe/vitrine" --version 2>&1 | head -n 1)"
    say "binary: $binary ($version)"
fi

# What goes into /etc: the repository's config with "library" set (every other value as it is), the device table,
# and the unit with the library's path in ReadOnlyPaths=.
json_library="\"library\": \"$library\""
if grep -q '^  "library":' "$repo/Config/vitrine.json"; then
    sed -E "0,/^  \"library\":/s#^(  )\"library\": *(\"[^\"]*\"|null)#\\1$json_library#" \
        "$repo/Config/vitrine.json" >"$work/vitrine.json"
else
    sed "1s#^{\$#{\n  $json_library,#" "$repo/Config/vitrine.json" >"$work/vitrine.json"
fi
grep -qF "  $json_library" "$work/vitrine.json" ||
    die "could not set the library in a copy of $repo/Config/vitrine.json"
if $web; then
    sed -i "1s#^{\$#{\n  \"web\": {\"port\": 8080},#" "$work/vitrine.json"
    grep -qF '  "web": {"port": 8080},' "$work/vitrine.json" || die "could not turn on the web remote in the config"
fi
if command -v python3 >/dev/null; then
    python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$work/vitrine.json" ||
        die "the config made from $repo/Config/vitrine.json is not valid JSON"
fi
cp -- "$repo/Config/devices.json" "$work/devices.json"
sed "s#^ReadOnlyPaths=-/srv/vitrine\$#ReadOnlyPaths=-$library#" "$here/vitrine.service" >"$work/vitrine.service"
grep -qx "ReadOnlyPaths=-$library" "$work/vitrine.service" ||
    die "$here/vitrine.service has no ReadOnlyPaths=-/srv/vitrine line"
# The web remote writes the library (uploads, and hide and delete: moves into .hidden and .trash), and so do the
# sources' syncs (each photo renamed into its category, their list in .vitrine-sources).
writers=()
if $web; then writers+=("the web remote's uploads"); fi
if $sources; then writers+=("the sources' syncs"); fi
writes=false
if [ ${#writers[@]} -gt 0 ]; then
    writes=true
    sed -i "s#^ReadOnlyPaths=-$library\$#ReadWritePaths=-$library#" "$work/vitrine.service"
    say "the unit may write the library $library (ReadWritePaths=) for ${writers[*]}"
fi
case $library/ in
/home/* | /root/* | /run/user/*)
    # ProtectHome=yes would hide it from the player.
    sed -i 's#^ProtectHome=yes$#ProtectHome=read-only#' "$work/vitrine.service"
    say "the library is under a home folder: the unit gets ProtectHome=read-only instead of yes"
    ;;
esac
cp -- "$here/vitrine-console.service" "$work/vitrine-console.service"

for dir in "${old_dirs[@]}"; do
    [ -d "$R$dir" ] && dirs+=("$dir")
done
ensure_dir "$(dirname "$BIN")"
install_file "$binary" "$BIN" 755 binary
ensure_dir "$UNIT_DIR"
install_file "$work/vitrine.service" "$UNIT" 644 config
install_file "$work/vitrine-console.service" "$HELPER" 644 config
ensure_dir "$CONF_DIR"
install_file "$work/vitrine.json" "$CONFIG" 644 config
install_file "$work/devices.json" "$DEVICES" 644 config
# The web remote's page, found beside the binary ($SHARE is ../share/vitrine from $BIN); the player's own files,
# brought up to date like the binary.
ensure_dir "$SHARE/web"
for page in index.html app.js style.css openapi.json; do
    install_file "$repo/web/$page" "$SHARE/web/$page" 644 binary
done
# The place index for {place} captions (GeoNames data, CC BY 4.0: the README has the attribution), found beside the
# binary the same way. Written under a temporary name and renamed, as every file here: the player maps it, and a
# file rewritten in place under a mapping would fault its reader.
install_file "$repo/data/places.vgeo" "$SHARE/places.vgeo" 644 binary

# The service user: no home, no shell; the groups that open the screen, the input devices and (Raspberry Pi OS's
# gpio group, where there is one) the GPIO chips for buttons and a motion sensor.
groups=()
for group in video input render gpio; do
    group_exists "$group" && groups+=("$group")
done
group_list=$(
    IFS=,
    printf '%s' "${groups[*]}"
)
user_args=(--system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin)
# Its own group, made along with it unless a group of that name is there already.
group_created=
if group_exists "$USER_NAME"; then
    user_args+=(--gid "$USER_NAME")
else
    user_args+=(--user-group)
fi
[ -z "$group_list" ] || user_args+=(--groups "$group_list")
if [ -n "$R" ] && [ ! -f "$R/etc/passwd" ]; then
    say "skipped creating user $USER_NAME: $R/etc/passwd does not exist" \
        "(create it on the target: useradd ${user_args[*]} $USER_NAME)"
elif user_exists "$USER_NAME"; then
    say "user $USER_NAME exists${R:+ in $R/etc/passwd}"
    if [ "$old_user" = "$USER_NAME" ]; then
        user_created=$USER_NAME
        group_created=$old_group
    fi
elif [ "$(id -u)" -ne 0 ]; then
    say "skipped creating user $USER_NAME in $R/etc/passwd: that needs root"
else
    if [ -z "$R" ]; then
        useradd "${user_args[@]}" "$USER_NAME"
        say "created user $USER_NAME (groups: ${group_list:-none})"
    else
        useradd --prefix "$R" "${user_args[@]}" "$USER_NAME"
        say "created user $USER_NAME in $R/etc/passwd (groups: ${group_list:-none})"
    fi
    user_created=$USER_NAME
    if [[ " ${user_args[*]} " == *" --user-group "* ]]; then group_created=$USER_NAME; fi
fi

# The library: created for the admin who ran sudo, so content can be copied in without root; an existing one is
# left exactly as it is.
if [ -d "$R$library" ]; then
    say "library $R$library/ exists: left as it is"
    if $writes; then
        say "the vitrine user needs to write $library and its category folders (uploads, syncs)" \
            "(e.g. chgrp -R vitrine $library && chmod -R g+w $library)"
    fi
elif $writes; then
    # The player adds photos and folders; its group, inherited by new folders (setgid), lets admins in it copy too.
    mkdir -p -- "$R$library"
    if [ "$(id -u)" -eq 0 ] && user_exists "$USER_NAME"; then
        if [ -z "$R" ]; then
            chown "$USER_NAME:" -- "$R$library"
        else
            chown "$(awk -F: -v name="$USER_NAME" '$1 == name { print $3 ":" $4 }' "$R/etc/passwd")" -- "$R$library"
        fi
    fi
    chmod 2775 -- "$R$library"
    say "created library $R$library/ (owned by $USER_NAME, mode 2775: add yourself to group $USER_NAME to copy in)"
else
    mkdir -p -- "$R$library"
    owner=
    if [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
        if [ -z "$R" ]; then
            owner=$(id -u "$SUDO_USER"):$(id -g "$SUDO_USER")
        else
            owner=$(awk -F: -v name="$SUDO_USER" '$1 == name { print $3 ":" $4 }' "$R/etc/passwd" 2>/dev/null || true)
            [ -n "$owner" ] || say "($SUDO_USER is not in $R/etc/passwd: the library stays owned by root)"
        fi
    fi
    if [ -n "$owner" ] && [ "$(id -u)" -eq 0 ]; then
        chown "$owner" -- "$R$library"
        say "created library $R$library/ (owned by $SUDO_USER)"
    else
        say "created library $R$library/"
    fi
fi

# Enabling in a tree is a symlink in its multi-user.target.wants (made by systemctl below): a folder of ours if new.
[ -z "$R" ] || ensure_dir "$WANTS_DIR"

# The manifest: one line per file with the checksum of what was written, the folders created (parents first), the
# user made, and the library (only ever named, never removed).
ensure_dir "$SHARE"
{
    printf '# Written by deploy/install.sh: what it added, for --uninstall. Do not edit.\n'
    for file in "${files[@]}"; do printf 'file %s %s\n' "${file_sums[$file]}" "$file"; done
    for dir in "${dirs[@]}"; do printf 'dir %s\n' "$dir"; done
    [ -z "$user_created" ] || printf 'user %s\n' "$user_created"
    [ -z "$group_created" ] || printf 'group %s\n' "$group_created"
    printf 'library %s\n' "$library"
} >"$work/manifest"
if [ ! -f "$R$MANIFEST" ] || ! cmp -s "$work/manifest" "$R$MANIFEST"; then
    write_file "$work/manifest" "$R$MANIFEST" 644
    say "wrote $R$MANIFEST"
fi

# The config as the player reads it, when the binary runs here and knows check-config.
config_ok=true
if $runs_here && unprivileged "$probe/vitrine" check-config --help >/dev/null 2>&1; then
    if report=$(unprivileged "$probe/vitrine" check-config "$R$CONFIG" "$R$DEVICES" 2>&1); then
        say "checked $R$CONFIG and $R$DEVICES: valid"
    else
        config_ok=false
        printf 'install.sh: %s\n' "$report" >&2
    fi
else
    say "did not check $R$CONFIG: $binary does not run here or has no check-config"
fi

# Enabled for the next boot; in the running system also started now, or restarted when something changed.
if [ -n "$R" ]; then
    if [ -L "$R$WANTS_DIR/vitrine.service" ]; then
        say "vitrine.service is enabled in $R"
    elif command -v systemctl >/dev/null; then
        systemctl --root="$R" enable vitrine.service
    else
        ln -s "$UNIT" "$R$WANTS_DIR/vitrine.service"
        say "enabled vitrine.service: $R$WANTS_DIR/vitrine.service"
    fi
    $config_ok || say "warning: $R$CONFIG did not pass check-config (see above)"
    say "Vitrine is installed in $R: vitrine.service starts when that system boots."
elif ! $running_systemd; then
    systemctl enable vitrine.service
    say "systemd is not running here: vitrine.service starts at the next boot."
else
    ! $units_changed || systemctl daemon-reload
    systemctl enable vitrine.service
    if ! $config_ok; then
        die "not starting vitrine.service: fix $CONFIG (see above), then: sudo systemctl restart vitrine"
    elif [ "$(tty 2>/dev/null || true)" = /dev/tty1 ]; then
        say "not starting vitrine.service now: it takes over tty1, where this shell runs." \
            "From SSH or another console (Ctrl-Alt-F2): sudo systemctl start vitrine (or reboot)."
    elif systemctl -q is-active vitrine.service; then
        if $changed; then
            systemctl restart vitrine.service
            say "restarted vitrine.service: journalctl -u vitrine -f shows what it does."
        else
            say "vitrine.service is running and nothing changed."
        fi
    else
        systemctl start vitrine.service
        say "started vitrine.service: journalctl -u vitrine -f shows what it does."
    fi
fi

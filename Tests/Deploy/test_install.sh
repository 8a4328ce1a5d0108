#!/usr/bin/env bash
# deploy/install.sh in throw-away roots: what it installs (files, modes, contents, the enabled unit, the user),
# that a second run changes nothing, that an edited config is kept, that --uninstall removes exactly what was added,
# that systemd 252 accepts the unit as installed, and that every shell script in the repository is shellcheck clean.
# One line per check, a summary, exit 1 on any failure. Runs as root (useradd --prefix, chown); nothing outside
# the mktemp folder is touched, which the last checks confirm.
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: Tests/Deploy/test_install.sh [--vitrine BIN]

  --vitrine BIN   install this binary (e.g. .build/release/vitrine); without it a small stand-in script is
                  installed instead, so no Swift build is needed
EOF
}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
installer=$repo/deploy/install.sh
vitrine=
while [ $# -gt 0 ]; do
    case $1 in
    --vitrine)
        [ $# -ge 2 ] || {
            usage >&2
            exit 2
        }
        vitrine=$2
        shift 2
        ;;
    --vitrine=*) vitrine=${1#*=} && shift ;;
    -h | --help)
        usage
        exit 0
        ;;
    *)
        printf 'test_install.sh: unknown argument %s\n' "$1" >&2
        usage >&2
        exit 2
        ;;
    esac
done

passed=0
failed=0
skipped=0
pass() {
    printf 'PASS %s\n' "$1"
    passed=$((passed + 1))
}
fail() {
    printf 'FAIL %s%s\n' "$1" "${2:+: $2}"
    failed=$((failed + 1))
}
skip() {
    printf 'SKIP %s: %s\n' "$1" "$2"
    skipped=$((skipped + 1))
}
# check NAME COMMAND...: PASS when the command succeeds.
check() {
    local name=$1
    shift
    if "$@"; then pass "$name"; else fail "$name"; fi
}
indent() { sed 's/^/    /'; }

if [ "$(id -u)" -ne 0 ]; then
    printf 'SKIP all: needs root (useradd --prefix and chown in the throw-away root); run it with sudo\n'
    exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
root=$tmp/root

if [ -n "$vitrine" ]; then
    if [ ! -f "$vitrine" ] || [ ! -x "$vitrine" ]; then
        printf 'test_install.sh: %s is not an executable file\n' "$vitrine" >&2
        exit 2
    fi
    binary=$(cd "$(dirname "$vitrine")" && pwd)/$(basename "$vitrine")
    printf 'binary under test: %s\n' "$binary"
else
    binary=$tmp/vitrine-stand-in
    cat >"$binary" <<'EOF'
#!/bin/sh
# Stand-in for the vitrine binary in Tests/Deploy/test_install.sh: answers --version, knows no command.
case $1 in
--version) echo "vitrine stand-in (deploy test)" ;;
*)
    echo "vitrine stand-in: no command '$1'" >&2
    exit 2
    ;;
esac
EOF
    chmod 755 "$binary"
    printf 'binary under test: a stand-in script (%s); pass --vitrine BIN to install a real one\n' "$binary"
fi

# A minimal target system: accounts (with the groups the service user joins and an admin `pi` for $SUDO_USER),
# merged /usr, and for systemd-analyze verify the unit files of this host's systemd plus the commands the units
# run (verify only checks that they exist and are executable inside the root).
make_root() {
    local dir=$1
    mkdir -p "$dir/etc" "$dir/usr/bin" "$dir/usr/sbin" "$dir/usr/lib/systemd"
    ln -s usr/bin "$dir/bin"
    ln -s usr/sbin "$dir/sbin"
    printf 'root:x:0:0:root:/root:/bin/bash\npi:x:1000:1000:,,,:/home/pi:/bin/bash\n' >"$dir/etc/passwd"
    printf 'root:x:0:\nvideo:x:44:pi\ninput:x:105:pi\nrender:x:106:pi\ngpio:x:997:pi\npi:x:1000:\n' >"$dir/etc/group"
    printf 'root:*:19700:0:99999:7:::\npi:*:19700:0:99999:7:::\n' >"$dir/etc/shadow"
    printf 'root:*::\nvideo:*::pi\ninput:*::pi\nrender:*::pi\ngpio:*::pi\npi:!::\n' >"$dir/etc/gshadow"
    chmod 640 "$dir/etc/shadow" "$dir/etc/gshadow"
    if [ -d /usr/lib/systemd/system ]; then cp -a /usr/lib/systemd/system "$dir/usr/lib/systemd/"; fi
    local command
    for command in sh kill; do
        printf '#!/bin/sh\n' >"$dir/usr/bin/$command"
        chmod 755 "$dir/usr/bin/$command"
    done
}

# Every path with its type, mode, owner, size, mtime, link target and content checksum.
snapshot() {
    (
        cd "$1"
        find . -printf '%p %y %m %U:%G %s %T@ %l\n' | sort
        find . -type f -exec sha256sum {} + | sort -k2
    )
}

# install.sh with a log; NAME is the check's name. The log is shown when it fails.
run_installer() {
    local name=$1 log=$2
    shift 2
    if SUDO_USER=pi "$installer" "$@" >"$log" 2>&1; then
        pass "$name"
    else
        fail "$name" "exit $?"
        indent <"$log"
    fi
}

# file_is PATH MODE [SAME-AS]: a regular file with that mode (and those bytes).
file_is() {
    [ -f "$1" ] && [ "$(stat -c %a "$1")" = "$2" ] || return 1
    [ $# -lt 3 ] || cmp -s "$1" "$3"
}
same_file() { cmp -s "$1" "$2"; }
not() { ! "$@"; }
checksum() {
    local line
    line=$(sha256sum <"$1") || return 1
    printf '%s' "${line%% *}"
}
absent() { [ ! -e "$1" ] && [ ! -L "$1" ]; }
log_says() { grep -qF -- "$2" "$1"; }
# in_groups GROUP-FILE USER GROUP...: USER is a member of every GROUP.
in_groups() {
    local file=$1 user=$2 group
    shift 2
    for group in "$@"; do
        grep -qE "^$group:x:[0-9]+:(.*,)?$user(,|\$)" "$file" || return 1
    done
}
# manifest_lists ROOT PATH...: the manifest has a line with each file's current sha256.
manifest_lists() {
    local dir=$1 path
    shift
    for path in "$@"; do
        grep -qx "file $(checksum "$dir$path") $path" "$dir/usr/local/share/vitrine/manifest" || return 1
    done
}

# The config must be Config/vitrine.json with only "library" changed.
config_is() {
    python3 - "$repo/Config/vitrine.json" "$1" "$2" <<'EOF'
import json, sys
original, installed, library = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
expected = dict(original, library=library)
sys.exit(0 if installed == expected and list(installed) == list(expected) else 1)
EOF
}

# systemd-analyze verify on the unit as installed; anything it prints counts as a failure.
verify_units() {
    local dir=$1 name=$2 output
    shift 2
    if output=$(systemd-analyze --root="$dir" verify "$@" 2>&1) && [ -z "$output" ]; then
        pass "$name"
    else
        fail "$name"
        printf '%s\n' "$output" | indent
    fi
}

host_state() {
    local path
    for path in /etc/passwd /etc/group /etc/shadow /etc/gshadow; do
        [ -f "$path" ] && sha256sum "$path"
    done
    for path in /usr/local/bin/vitrine /etc/systemd/system/vitrine.service /etc/systemd/system/vitrine-console.service \
        /etc/vitrine /usr/local/share/vitrine /srv/vitrine /etc/systemd/system/multi-user.target.wants/vitrine.service; do
        if [ -e "$path" ] || [ -L "$path" ]; then printf 'exists %s\n' "$path"; fi
    done
}
host_before=$(host_state)

make_root "$root"
before_install=$(cd "$root" && find . | sort)
have_verify=false
command -v systemd-analyze >/dev/null && have_verify=true

# --- first install ---------------------------------------------------------------------------------------------
run_installer "install into a throw-away root" "$tmp/run1.log" --root "$root" --binary "$binary"
check "binary installed as /usr/local/bin/vitrine, mode 755, same bytes" \
    file_is "$root/usr/local/bin/vitrine" 755 "$binary"
check "unit installed, mode 644" file_is "$root/etc/systemd/system/vitrine.service" 644
check "unit's ReadOnlyPaths= is the library" grep -qx 'ReadOnlyPaths=-/srv/vitrine' "$root/etc/systemd/system/vitrine.service"
check "unit is deploy/vitrine.service" same_file "$repo/deploy/vitrine.service" "$root/etc/systemd/system/vitrine.service"
check "console helper unit installed, mode 644" \
    file_is "$root/etc/systemd/system/vitrine-console.service" 644 "$repo/deploy/vitrine-console.service"
check "config installed, mode 644" file_is "$root/etc/vitrine/vitrine.json" 644
check "config is Config/vitrine.json with library /srv/vitrine" config_is "$root/etc/vitrine/vitrine.json" /srv/vitrine
check "device table installed, mode 644, same as Config/devices.json" \
    file_is "$root/etc/vitrine/devices.json" 644 "$repo/Config/devices.json"
check "unit enabled (multi-user.target.wants symlink)" \
    test "$(readlink "$root/etc/systemd/system/multi-user.target.wants/vitrine.service")" = /etc/systemd/system/vitrine.service
check "user vitrine in DIR/etc/passwd, no login shell, no home" \
    grep -qE '^vitrine:x:[0-9]+:[0-9]+:[^:]*:/nonexistent:/usr/sbin/nologin$' "$root/etc/passwd"
check "user vitrine in groups video, input, render, gpio" in_groups "$root/etc/group" vitrine video input render gpio
check "library folder created, owned by \$SUDO_USER (pi, 1000:1000)" \
    test "$(stat -c %F,%u:%g "$root/srv/vitrine" 2>&1)" = directory,1000:1000
check "manifest lists each installed file with its sha256" manifest_lists "$root" /usr/local/bin/vitrine \
    /etc/systemd/system/vitrine.service /etc/systemd/system/vitrine-console.service /etc/vitrine/vitrine.json \
    /etc/vitrine/devices.json
check "the web remote's page installed beside the binary (DIR/usr/local/share/vitrine/web)" manifest_lists "$root" \
    /usr/local/share/vitrine/web/index.html /usr/local/share/vitrine/web/app.js \
    /usr/local/share/vitrine/web/style.css /usr/local/share/vitrine/web/openapi.json
check "the place index installed beside the binary, mode 644, same as data/places.vgeo" \
    file_is "$root/usr/local/share/vitrine/places.vgeo" 644 "$repo/data/places.vgeo"
check "manifest lists the place index" manifest_lists "$root" /usr/local/share/vitrine/places.vgeo
check "messages name the files (installed DIR/etc/vitrine/vitrine.json)" log_says "$tmp/run1.log" "installed $root/etc/vitrine/vitrine.json"

if "$binary" check-config --help >/dev/null 2>&1; then
    if output=$("$binary" check-config "$root/etc/vitrine/vitrine.json" "$root/etc/vitrine/devices.json" 2>&1); then
        pass "installed config and device table pass vitrine check-config"
    else
        fail "installed config and device table pass vitrine check-config"
        printf '%s\n' "$output" | indent
    fi
else
    skip "vitrine check-config on the installed config" "the binary under test has no check-config"
fi

if $have_verify; then
    verify_units "$root" "systemd-analyze verify: vitrine.service and vitrine-console.service as installed" \
        vitrine.service vitrine-console.service
    # The check above must be able to fail: a directive systemd 252 does not know has to be reported.
    sed 's/^RestartSec=.*/&\nRestartSteps=3/' "$root/etc/systemd/system/vitrine.service" \
        >"$root/etc/systemd/system/vitrine-selfcheck.service"
    output=$(systemd-analyze --root="$root" verify vitrine-selfcheck.service 2>&1 || true)
    if [[ $output == *"Unknown key 'RestartSteps'"* ]]; then
        pass "systemd-analyze verify reports a directive systemd 252 lacks (self-check)"
    else
        fail "systemd-analyze verify reports a directive systemd 252 lacks (self-check)"
    fi
    rm -f "$root/etc/systemd/system/vitrine-selfcheck.service"
else
    skip "systemd-analyze verify" "systemd-analyze is not installed (make deploy-check-deps)"
fi

# --- second run: nothing changes -------------------------------------------------------------------------------
snapshot "$root" >"$tmp/snapshot1"
run_installer "second install run" "$tmp/run2.log" --root "$root" --binary "$binary"
snapshot "$root" >"$tmp/snapshot2"
if cmp -s "$tmp/snapshot1" "$tmp/snapshot2"; then
    pass "second run changes nothing (paths, modes, owners, sizes, mtimes, checksums)"
else
    fail "second run changes nothing (paths, modes, owners, sizes, mtimes, checksums)"
    diff "$tmp/snapshot1" "$tmp/snapshot2" | indent || true
fi
check "second run reports no writes" not grep -qE "^(installed|updated|wrote|created|set mode|removed) " "$tmp/run2.log"

# --- an edited config and a photo ------------------------------------------------------------------------------
sed -i 's/"interval": 10,/"interval": 20,/' "$root/etc/vitrine/vitrine.json"
mkdir -p "$root/srv/vitrine/Trips"
photo=$(find "$repo/Config/sample-library" -name '*.jpg' -print -quit 2>/dev/null || true)
if [ -n "$photo" ]; then cp "$photo" "$root/srv/vitrine/Trips/beach.jpg"; else printf '\377\330\377\331' >"$root/srv/vitrine/Trips/beach.jpg"; fi
photo_sum=$(checksum "$root/srv/vitrine/Trips/beach.jpg")
edited_sum=$(checksum "$root/etc/vitrine/vitrine.json")
run_installer "install over an edited config" "$tmp/run3.log" --root "$root" --binary "$binary"
check "edited config kept" test "$(checksum "$root/etc/vitrine/vitrine.json")" = "$edited_sum"
check "new config written beside it as vitrine.json.dist" config_is "$root/etc/vitrine/vitrine.json.dist" /srv/vitrine
check "the installer says it kept the edited config" log_says "$tmp/run3.log" "kept $root/etc/vitrine/vitrine.json"
check "photo in the library untouched" test "$(checksum "$root/srv/vitrine/Trips/beach.jpg")" = "$photo_sum"
snapshot "$root" >"$tmp/snapshot3"
run_installer "another run with the edited config" "$tmp/run4.log" --root "$root" --binary "$binary"
snapshot "$root" >"$tmp/snapshot4"
if cmp -s "$tmp/snapshot3" "$tmp/snapshot4"; then
    pass "run after the edit changes nothing either (.dist not rewritten)"
else
    fail "run after the edit changes nothing either (.dist not rewritten)"
    diff "$tmp/snapshot3" "$tmp/snapshot4" | indent || true
fi

# --- uninstall -------------------------------------------------------------------------------------------------
run_installer "uninstall" "$tmp/uninstall.log" --uninstall --root "$root"
for path in /usr/local/bin/vitrine /etc/systemd/system/vitrine.service /etc/systemd/system/vitrine-console.service \
    /etc/systemd/system/multi-user.target.wants/vitrine.service /etc/vitrine/devices.json \
    /etc/vitrine/vitrine.json.dist /usr/local/share/vitrine/manifest; do
    check "uninstall removed $path" absent "$root$path"
done
check "uninstall removed user and group vitrine (it created them)" \
    not grep -q "^vitrine:" "$root/etc/passwd" "$root/etc/group" "$root/etc/shadow" "$root/etc/gshadow"
check "uninstall kept the edited config" test "$(checksum "$root/etc/vitrine/vitrine.json")" = "$edited_sum"
check "uninstall kept the library and its photo" \
    test "$(checksum "$root/srv/vitrine/Trips/beach.jpg")" = "$photo_sum"
check "uninstall says it kept the edited config" log_says "$tmp/uninstall.log" "$root/etc/vitrine/vitrine.json (edited"
check "uninstall says it kept the library" log_says "$tmp/uninstall.log" "$root/srv/vitrine/ (the library"
# Left behind: exactly the kept files and their folders (and the account files' backups useradd/userdel make).
after_uninstall=$(cd "$root" && find . | sort)
leftovers=$(comm -13 <(printf '%s\n' "$before_install") <(printf '%s\n' "$after_uninstall") |
    grep -vxE '\./etc/(passwd|group|shadow|gshadow)-|\./etc/vitrine|\./etc/vitrine/vitrine\.json|\./srv|\./srv/vitrine(/Trips(/beach\.jpg)?)?' || true)
if [ -z "$leftovers" ]; then
    pass "uninstall leaves nothing else behind"
else
    fail "uninstall leaves nothing else behind"
    printf '%s\n' "$leftovers" | indent
fi

# --- a library under /home, and a root without accounts -------------------------------------------------------
home_root=$tmp/home-root
make_root "$home_root"
rm -f "$home_root/etc/passwd"
run_installer "install with --library /home/pi/Photos into a root without etc/passwd" "$tmp/home.log" \
    --root "$home_root" --binary "$binary" --library /home/pi/Photos/
check "config's library is /home/pi/Photos" config_is "$home_root/etc/vitrine/vitrine.json" /home/pi/Photos
check "unit's ReadOnlyPaths= is /home/pi/Photos" \
    grep -qx "ReadOnlyPaths=-/home/pi/Photos" "$home_root/etc/systemd/system/vitrine.service"
check "unit has ProtectHome=read-only for a library under /home" \
    grep -qx "ProtectHome=read-only" "$home_root/etc/systemd/system/vitrine.service"
check "user creation skipped with a message naming DIR/etc/passwd" \
    log_says "$tmp/home.log" "skipped creating user vitrine: $home_root/etc/passwd does not exist"
if $have_verify; then
    verify_units "$home_root" "systemd-analyze verify: the unit with a library under /home" vitrine.service
fi
check "a library path the unit cannot hold unquoted is refused" \
    not "$installer" --root "$home_root" --binary "$binary" --library "/srv/my photos" 2>/dev/null

# --- --web: the remote on, and a library the service may write -----------------------------------------------
web_root=$tmp/web-root
make_root "$web_root"
run_installer "install with --web" "$tmp/web.log" --root "$web_root" --binary "$binary" --web
web_config_is() {
    python3 - "$repo/Config/vitrine.json" "$1" <<'EOF'
import json, sys
original, installed = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
sys.exit(0 if installed == dict(original, library="/srv/vitrine", web={"port": 8080}) else 1)
EOF
}
check "config turns the web remote on (web.port 8080), the rest as Config/vitrine.json" \
    web_config_is "$web_root/etc/vitrine/vitrine.json"
check "unit's ReadWritePaths= is the library" \
    grep -qx 'ReadWritePaths=-/srv/vitrine' "$web_root/etc/systemd/system/vitrine.service"
check "unit has no ReadOnlyPaths= for the library" \
    not grep -qx 'ReadOnlyPaths=-/srv/vitrine' "$web_root/etc/systemd/system/vitrine.service"
check "the library belongs to the vitrine user, mode 2775" test "$(stat -c %F,%u,%a "$web_root/srv/vitrine" 2>&1)" = \
    "directory,$(awk -F: '$1 == "vitrine" { print $3 }' "$web_root/etc/passwd"),2775"
if $have_verify; then
    verify_units "$web_root" "systemd-analyze verify: the unit with --web" vitrine.service
fi

# --- --sources: a library the service's syncs may write, the web remote off ------------------------------------
sources_root=$tmp/sources-root
make_root "$sources_root"
run_installer "install with --sources" "$tmp/sources.log" --root "$sources_root" --binary "$binary" --sources
check "with --sources the config is Config/vitrine.json's (sources are the user's to name)" \
    config_is "$sources_root/etc/vitrine/vitrine.json" /srv/vitrine
check "with --sources the unit's ReadWritePaths= is the library" \
    grep -qx 'ReadWritePaths=-/srv/vitrine' "$sources_root/etc/systemd/system/vitrine.service"
check "with --sources the library belongs to the vitrine user, mode 2775" \
    test "$(stat -c %F,%u,%a "$sources_root/srv/vitrine" 2>&1)" = \
    "directory,$(awk -F: '$1 == "vitrine" { print $3 }' "$sources_root/etc/passwd"),2775"
check "the installer says why the library is writable" log_says "$tmp/sources.log" "for the sources' syncs"

# --- the binary under test never runs as root ---------------------------------------------------------------
# A spy binary notes who runs it, in a folder anyone may write to (the throw-away folder is root's alone).
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
    spy_notes=$(mktemp -d)
    chmod 1777 "$spy_notes"
    spy=$tmp/vitrine-spy
    # shellcheck disable=SC2016 # $1 is the spy's own argument
    printf '#!/bin/sh\nid -u >>%s/uids\ncase $1 in --version) echo "vitrine spy" ;; esac\nexit 0\n' "$spy_notes" >"$spy"
    chmod 755 "$spy"
    make_root "$tmp/spy-root"
    run_installer "install with a binary that notes who runs it" "$tmp/spy.log" --root "$tmp/spy-root" --binary "$spy"
    check "the installer ran the binary, and only as an unprivileged user ($(sort -u "$spy_notes/uids" | tr '\n' ' '))" \
        bash -c "[ -s '$spy_notes/uids' ] && ! grep -qx 0 '$spy_notes/uids'"
    rm -rf -- "$spy_notes"
else
    skip "the binary runs unprivileged" "needs root and a user nobody"
fi

check "nothing outside the throw-away roots changed" test "$(host_state)" = "$host_before"

# --- shellcheck ------------------------------------------------------------------------------------------------
# Every shell script, as `make shellcheck` checks them (Tests/Tools/shell_scripts.sh lists them).
if command -v shellcheck >/dev/null; then
    while IFS= read -r script; do
        if output=$(cd "$repo" && shellcheck -x "$script" 2>&1); then
            pass "shellcheck $script"
        else
            fail "shellcheck $script"
            printf '%s\n' "$output" | indent
        fi
    done < <(cd "$repo" && Tests/Tools/shell_scripts.sh)
else
    skip "shellcheck" "shellcheck is not installed (make deploy-check-deps)"
fi

printf '%d passed, %d failed, %d skipped\n' "$passed" "$failed" "$skipped"
[ "$failed" -eq 0 ]

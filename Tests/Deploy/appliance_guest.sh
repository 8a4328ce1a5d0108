# shellcheck shell=bash
# Sourced by service_guest.sh once install.sh's checks are done (and it is uninstalled): Vitrine as an appliance.
# The Debian package installed with apt into the running system, the frame playing, its config edited, an upgrade
# to a package of a higher version (the edited config kept, the player restarted once, the show resumed at its
# slide), `vitrine doctor` on the healthy install and on three broken ones, and the state folder as a read-only root
# leaves it, with / remounted read-only: on a partition of its own, on tmpfs, and read-only too.
# Uses service_guest.sh's helpers (check, mark, settle, state, playing, main_pid, within, eventually).
# /share/debs holds vitrine_*-1_*.deb and vitrine_*-2_*.deb; /dev/vda is an empty ext4 disk for /var/lib/vitrine.

# shellcheck disable=SC2154  # source and since are service_guest.sh's
: "${source:?}" "${since:?}"
deb_old=$(ls /share/debs/vitrine_*-1_*.deb)
deb_new=$(ls /share/debs/vitrine_*-2_*.deb)
ctl() { /usr/bin/vitrine ctl --control /run/vitrine/vitrine.sock "$@" 2>&1; }
status_field() { ctl status | python3 -c "import json, sys; print(json.load(sys.stdin).get('$1'))" 2>/dev/null; }
doctor_json() { /usr/bin/vitrine doctor --json 2>&1; }
packaged_player() { playing && [ "$(readlink -f "/proc/$(main_pid)/exe")" = /usr/bin/vitrine ]; }
doctor_says_well() { [ "$doctor_status" = 0 ] && [[ $doctor_text == *"All is well."* ]]; }
upgraded() { [ "$status" = 0 ] && [[ $deb_new == *"_${version}_"* ]]; }
restarted_once() { [ "$(main_pid)" != "$pid" ] && [ "$starts" = 1 ] && playing; }
resumed() {
    [ -n "$slide_before" ] && [ "$slide_before" != None ] && [ "$(status_field slide)" = "$slide_before" ] &&
        [ "$(status_field category)" = "$category_before" ]
}
long_interval() { ctl status | grep -q '"seconds_left":5[0-9][0-9]'; }
video_finding() { finding groups problem "not in the video group" && [[ $doctor == *"usermod -aG video vitrine"* ]]; }
library_finding() { [ "$gone_status" = 1 ] && finding library problem "/srv/vitrine is not there"; }
position_readable() { python3 -c 'import json; json.load(open("/var/lib/vitrine/position.json"))'; }
said_once() { playing && [ "$said" = 1 ]; }
root_read_only() { findmnt -n -o OPTIONS / | grep -q '^ro,' && ! touch /written-on-a-read-only-root 2>/dev/null; }
root_writers() {
    # Why / could not be remounted read-only: files on it open for writing, or deleted but still open.
    local fd target flags
    for fd in /proc/[0-9]*/fd/*; do
        target=$(readlink "$fd" 2>/dev/null) || continue
        case $target in /*) ;; *) continue ;; esac
        [ "$(stat -f -c %T "$target" 2>/dev/null)" = overlayfs ] || [[ $target == *"(deleted)" ]] || continue
        flags=$(awk '/^flags/ {print $2}' "${fd%/fd/*}/fdinfo/${fd##*/}" 2>/dev/null)
        if [[ $target == *"(deleted)" ]] || (((8#${flags:-0} & 3) != 0)); then
            echo "INFO   open: $(cat "${fd%/fd/*}/comm") ${fd%/fd/*} $target flags=$flags"
        fi
    done
}
finding() {
    # finding TOPIC VERDICT: the doctor's JSON has a finding of that topic and verdict, its text matching $3.
    python3 -c '
import json, re, sys
report = json.loads(sys.argv[1])
hits = [f for f in report["findings"] if f["topic"] == sys.argv[2] and f["verdict"] == sys.argv[3]
        and re.search(sys.argv[4], f["text"])]
sys.exit(0 if hits and report["healthy"] == (sys.argv[3] != "problem") else 1)' "$doctor" "$1" "$2" "$3"
}

mark "apt install the package"
# The host this guest's root comes from is a container whose policy-rc.d forbids starting services; a Debian
# system has none, and the package's postinst must start the player itself.
rm -f /usr/sbin/policy-rc.d
mkdir -p /srv/vitrine/Trips
cp "$source"/Config/sample-library/*.jpg /srv/vitrine/Trips/
output=$(DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$deb_old" 2>&1)
status=$?
printf '%s\n' "$output" | tail -5 | sed 's/^/INFO   /'
settle 8
state
check "apt install ./$(basename "$deb_old")" "exit $status" test "$status" = 0
check "the package's service plays from /usr/bin as vitrine" "$(systemctl show -P StatusText vitrine.service)" \
    packaged_player
check "the user vitrine is in the video group" "$(id vitrine)" eval 'id -nG vitrine | grep -qw video'
doctor_text=$(/usr/bin/vitrine doctor 2>&1)
doctor_status=$?
printf '%s\n' "$doctor_text" | sed 's/^/INFO   doctor: /'
check "vitrine doctor on the fresh install: all is well" "exit $doctor_status" \
    doctor_says_well

mark "edit the config, move on a few slides"
# An owner's edit: the interval (long, so the slide does not move by itself while the package is upgraded).
sed -i 's/"interval": *[0-9.]*/"interval": 600/' /etc/vitrine/vitrine.json
ctl reload >/dev/null
for _ in 1 2 3; do ctl next >/dev/null; sleep 1; done
slide_before=$(status_field slide)
category_before=$(status_field category)
check "the edited config is taken" "$(grep '"interval"' /etc/vitrine/vitrine.json)" long_interval

mark "upgrade to the package of a higher version"
pid=$(main_pid)
output=$(DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$deb_new" 2>&1)
status=$?
printf '%s\n' "$output" | tail -4 | sed 's/^/INFO   /'
settle 8
state
starts=$(journalctl -q -u vitrine.service --since "$since" -o cat | grep -c '^Started ')
version=$(dpkg-query -W -f '${Version}' vitrine)
check "apt upgrades to $version" "exit $status" upgraded
check "the edited config is kept (a conffile)" "$(grep '"interval"' /etc/vitrine/vitrine.json)" \
    grep -q '"interval": 600' /etc/vitrine/vitrine.json
check "the player was restarted once" "pid $pid -> $(main_pid), $starts start(s) in the journal" restarted_once
check "the show resumed at its slide" "$category_before/$slide_before -> $(status_field category)/$(status_field slide)" \
    resumed

mark "doctor: the user not in the video group"
gpasswd -d vitrine video >/dev/null
doctor=$(doctor_json)
check "doctor says the user is not in the video group, with the fix" "$(printf '%s' "$doctor" | head -c 300)" \
    video_finding
adduser vitrine video >/dev/null

mark "doctor: the library missing"
mv /srv/vitrine /srv/vitrine.away
doctor=$(doctor_json)
/usr/bin/vitrine doctor >/dev/null 2>&1
gone_status=$?
check "doctor says the photo folder is not there (exit 1)" "exit $gone_status" library_finding
mv /srv/vitrine.away /srv/vitrine

mark "doctor: the MQTT broker down"
cp /etc/vitrine/vitrine.json /root/vitrine.json.kept
python3 - <<'EOF'
import json
path = "/etc/vitrine/vitrine.json"
config = json.load(open(path))
config["mqtt"] = {"host": "127.0.0.1", "port": 1883}
json.dump(config, open(path, "w"), indent=2)
EOF
doctor=$(doctor_json)
check "doctor says the broker does not answer" "$(printf '%s' "$doctor" | grep -o '"topic":"mqtt"[^}]*' | head -c 200)" \
    finding mqtt problem "127.0.0.1:1883 does not answer"
cp /root/vitrine.json.kept /etc/vitrine/vitrine.json

mark "read-only root, /var/lib/vitrine on a partition of its own"
# / itself remounted read-only (the journal moved to /run first, as on a read-only system; /tmp is tmpfs), and
# /var/lib/vitrine on a partition of its own, as a read-only root keeps it.
systemctl stop vitrine.service
settle 2
mkdir -p /root/state-kept && cp -a /var/lib/vitrine/. /root/state-kept/
journalctl --relinquish-var
# apt's hook woke PackageKit, which holds its database open for writing; a read-only system runs no apt.
systemctl stop packagekit.service 2>/dev/null
sync
remount=$(mount -o remount,ro / 2>&1) || root_writers
check "the root is mounted read-only" "$(findmnt -n -o OPTIONS /) $remount" root_read_only
mount /dev/vda /var/lib/vitrine
cp -a /root/state-kept/. /var/lib/vitrine/
chown -R vitrine: /var/lib/vitrine
systemctl start vitrine.service
settle 8
state
check "the frame plays on a read-only root" "$(systemctl show -P StatusText vitrine.service)" playing
ctl next >/dev/null
slide_before=$(status_field slide)
category_before=$(status_field category)
systemctl restart vitrine.service
settle 8
check "on a read-only root it resumes at its slide after a restart" \
    "$category_before/$slide_before -> $(status_field category)/$(status_field slide)" resumed
doctor=$(doctor_json)
check "doctor on a read-only root: the state persists on its partition" "$(printf '%s' "$doctor" | head -c 200)" \
    finding state ok "/var/lib/vitrine"
systemctl stop vitrine.service
check "its position is written on the partition" "$(head -c 160 /var/lib/vitrine/position.json 2>&1)" \
    position_readable

mark "read-only root, state on tmpfs"
umount /var/lib/vitrine
mount -t tmpfs -o mode=0755 tmpfs /var/lib/vitrine
chown vitrine: /var/lib/vitrine
systemctl start vitrine.service
settle 8
state
said=$(journalctl -q -u vitrine.service --since "$since" -o cat | grep -c 'is in memory (tmpfs)')
check "on tmpfs state the frame plays and says once what will not persist" "$said line(s)" said_once
doctor=$(doctor_json)
check "doctor notes the state is lost at reboot (not a problem)" "" finding state note "lost at each restart"
systemctl stop vitrine.service
umount /var/lib/vitrine

mark "read-only root, /var/lib/vitrine read-only too"
# Its own partition, mounted read-only: systemd cannot make it writable for the service.
mount -o ro /dev/vda /var/lib/vitrine
systemctl start vitrine.service
settle 8
state
said=$(journalctl -q -u vitrine.service --since "$since" -o cat | grep -c 'cannot be written')
check "with nowhere to write the frame still plays, and says where its state is kept instead" \
    "$(journalctl -q -u vitrine.service --since "$since" -o cat | grep 'state folder' | head -c 200)" said_once
systemctl stop vitrine.service
umount /var/lib/vitrine
mount -o remount,rw /
journalctl --flush
systemctl start vitrine.service
settle 5

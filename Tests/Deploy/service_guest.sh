#!/bin/bash
# Runs inside the service test's VM, as root under systemd 252, once the system is up: installs Vitrine for real
# with deploy/install.sh and puts the unit through start, a second install, restart, a crash, reload, the control
# socket, stop, the watchdog, a crash loop and uninstall, watching who holds tty1 each time. Prints one
# "CHECK ok|fail NAME: DETAIL" line per check (read by test_service_vm.py) and "INFO ..." lines, then powers off.
# Usage: service_guest.sh SOURCE BINARY (SOURCE holds deploy/ and Config/ copied from the checkout).
set -u
source=$1
binary=$2
export SYSTEMD_PAGER=
since=

check() {
    local name=$1 detail=$2
    shift 2
    if "$@"; then
        echo "CHECK ok $name: $detail"
    else
        echo "CHECK fail $name: $detail"
        explain
    fi
}
# After a failed check: what the service manager and the player said since the mark, and where the player is.
explain() {
    local pid
    pid=$(main_pid)
    journalctl -q -o short-monotonic --since "$since" -u vitrine.service -u getty@tty1.service \
        -u vitrine-console.service -u systemd-coredump@\* | tail -60 | sed 's/^/INFO   journal: /'
    if [ "$pid" != 0 ]; then
        echo "INFO   main pid $pid: $(ps -o stat=,wchan:32=,etime=,args= -p "$pid")"
        for task in /proc/"$pid"/task/*; do
            echo "INFO     thread ${task##*/} $(cat "$task"/comm 2>/dev/null): $(cut -d' ' -f3 "$task"/stat 2>/dev/null)" \
                "$(cat "$task"/wchan 2>/dev/null)"
        done
    fi
    echo "INFO   jobs: $(systemctl list-jobs --no-legend | tr '\n' ';')"
}
mark() {
    # journalctl --since takes wall-clock seconds: step past the current one so nothing earlier counts.
    sleep 1
    since=$(date '+%Y-%m-%d %H:%M:%S')
    echo "INFO --- $* (at $(cut -d' ' -f1 /proc/uptime) s)"
}
# Waits until no job but this test's own is queued, then a little longer for the player to settle.
settle() {
    local _
    for _ in $(seq 1 240); do
        systemctl list-jobs --no-legend | grep -v vitrine-test.service | grep -q . || break
        sleep 0.5
    done
    sleep "${1:-3}"
}
# Polls "$@" for up to 30 s.
eventually() {
    local _
    for _ in $(seq 1 150); do "$@" && return 0; sleep 0.2; done
    return 1
}
# within SECONDS COMMAND...: polls COMMAND every half second until it holds or SECONDS have passed.
within() {
    local seconds=$1 _
    shift
    for _ in $(seq 1 $((seconds * 2))); do "$@" && return 0; sleep 0.5; done
    return 1
}
active() { [ "$(systemctl is-active "$1")" = "$2" ]; }
main_pid() { systemctl show -P MainPID vitrine.service; }
getty_started() { journalctl -q -u getty@tty1.service --since "$since" | grep -q 'Started'; }
no_getty_started() { ! getty_started; }
state() {
    echo "INFO vitrine=$(systemctl is-active vitrine.service) getty@tty1=$(systemctl is-active getty@tty1.service)" \
        "pid=$(main_pid) tty1=$(stat -c %U /dev/tty1) ctty=$(ps -o tty= -p "$(main_pid)" 2>/dev/null)" \
        "status=$(systemctl show -P StatusText vitrine.service)"
}
playing() {
    active vitrine.service active && active getty@tty1.service inactive &&
        [ "$(ps -o user= -p "$(main_pid)")" = vitrine ] && [ "$(stat -c %U /dev/tty1)" = vitrine ]
}
console_back() { active vitrine.service "$1" && active getty@tty1.service active; }
status_says() { [[ $(systemctl show -P StatusText vitrine.service) == "$1"* ]]; }
# After a restart of any kind: a new player ($pid was the old one) and no getty started in between. The new pid is
# read first and must still be the main pid after the other checks: read in the other order, a player killed
# between the checks (MainPID 0 while the restart waits out RestartSec) would pass for a new one.
replaced_quietly() {
    local new
    new=$(main_pid)
    [ "$new" != 0 ] && [ "$new" != "$pid" ] && playing && [ "$(main_pid)" = "$new" ] && no_getty_started
}
unchanged_install() { [ "$status" = 0 ] && [ "$(main_pid)" = "$pid" ] && [[ $output == *"nothing changed"* ]]; }
reloaded() {
    [ "$(main_pid)" = "$pid" ] && journalctl -q -u vitrine.service --since "$since" | grep -q "config reloaded"
}
watchdog_restarted() {
    replaced_quietly && journalctl -q -u vitrine.service --since "$since" | grep -q "Watchdog timeout"
}
uninstalled() {
    ! id vitrine >/dev/null 2>&1 && [ ! -e /usr/local/bin/vitrine ] && [ ! -e /etc/systemd/system/vitrine.service ] &&
        [ ! -e /etc/vitrine ]
}

mark "boot"
state
check "getty on tty1 before the install" "getty@tty1 active" active getty@tty1.service active

mark "install"
output=$(cd "$source" && deploy/install.sh --no-packages --binary "$binary" --web </dev/null 2>&1)
status=$?
printf '%s\n' "$output" | sed 's/^/INFO   /'
check "install.sh in the running system" "exit $status" test "$status" = 0
# As the README tells an admin who copies photos in as root for a frame with the web remote: the category
# folder writable by the service's group (the library, made by --web, passes the group on).
mkdir -p /srv/vitrine/Trips && cp "$source"/Config/sample-library/*.jpg /srv/vitrine/Trips/ && chmod -R a+rX /srv/vitrine &&
    chmod g+w /srv/vitrine/Trips
settle 8
state
check "started by the installer" "vitrine active, getty stopped, player runs as vitrine and owns tty1" playing
check "Type=notify status" "$(systemctl show -P StatusText vitrine.service)" status_says playing
check "MemoryMax" "$(systemctl show -P MemoryMax vitrine.service)" \
    test "$(systemctl show -P MemoryMax vitrine.service)" = 268435456
journalctl -q -u vitrine.service -o cat | tail -5 | sed 's/^/INFO   /'

mark "second install"
pid=$(main_pid)
output=$(cd "$source" && deploy/install.sh --no-packages --binary "$binary" --web </dev/null 2>&1)
status=$?
settle 2
check "second install run leaves the running player alone" "exit $status, pid $pid -> $(main_pid)" \
    unchanged_install

mark "systemctl restart"
pid=$(main_pid)
systemctl restart vitrine.service
settle 8
state
check "systemctl restart" "new player, the getty stays away" replaced_quietly

mark "crash"
pid=$(main_pid)
kill -KILL "$pid"
within 60 replaced_quietly
settle 3
state
check "restart after SIGKILL" "NRestarts=$(systemctl show -P NRestarts vitrine.service), the getty stays away" \
    replaced_quietly

mark "reload"
pid=$(main_pid)
systemctl kill -s HUP --kill-who=main vitrine.service
eventually reloaded
check "SIGHUP reloads the config" "same pid, config reloaded" reloaded
mark "vitrine ctl reload"
answer=$(vitrine ctl reload 2>&1)
eventually reloaded
check "vitrine ctl reload" "$answer" reloaded
check "reloads leave the player holding tty1" "ctty $(ps -o tty= -p "$(main_pid)")" \
    test "$(ps -o tty= -p "$(main_pid)")" = tty1

mark "control socket"
answer=$(vitrine ctl status 2>&1)
check "vitrine ctl status as root" "$answer" grep -qF '"presented":' <<<"$answer"

mark "keys on the kiosk keyboard"
# Asks the host to type key combinations (QEMU qcodes, e.g. ctrl-c) on the virtio keyboard; waits until it did.
key_requests=0
keys() {
    local n=$((++key_requests)) _
    printf '%s\n' "$@" >/share/keys-$n.tmp && mv /share/keys-$n.tmp /share/keys-$n
    for _ in $(seq 1 300); do [ -e /share/keys-$n.done ] && return 0; sleep 0.1; done
    return 1
}
presented() { vitrine ctl status 2>/dev/null | sed -n 's/.*"presented":\([0-9]*\).*/\1/p'; }
active_vt() { cat /sys/class/tty/tty0/active; }
advanced_past() { [ "$(presented)" -gt "$1" ] 2>/dev/null; }
on_vt() { [ "$(active_vt)" = "$1" ]; }
paused_for() { vitrine ctl status 2>/dev/null | grep -q "\"$1\""; }
not_paused_for() { ! paused_for "$1"; }
same_player_playing() { playing && [ "$(main_pid)" = "$pid" ]; }
# A second photo, so the show has somewhere to advance to.
cp /srv/vitrine/Trips/dandelions.jpg /srv/vitrine/Trips/dandelions-again.jpg
two_slides() { vitrine ctl status 2>/dev/null | grep -q '"count":2'; }
eventually two_slides
pid=$(main_pid)
before=$(presented)
typed=no
keys ctrl-c ctrl-z ctrl-backslash ctrl-c && typed=yes
# The timer still advances: the interval is 10 s, so one more slide within 30 s.
eventually advanced_past "$before"
check "Ctrl-C, Ctrl-Z and Ctrl-\\ on the keyboard leave the show playing" \
    "typed $typed, pid $pid -> $(main_pid), presented $before -> $(presented)" same_player_playing
check "the player still answers and advances after the keys" "presented $(presented)" advanced_past "$before"
away_on_vt2() { on_vt tty2 && paused_for vtAway; }
back_on_vt1() { on_vt tty1 && not_paused_for vtAway && same_player_playing; }
keys ctrl-alt-f2
eventually away_on_vt2
check "Ctrl+Alt+F2 switches to VT 2 and the show holds" "active $(active_vt)" away_on_vt2
keys ctrl-alt-f1
eventually back_on_vt1
check "Ctrl+Alt+F1 on VT 2 switches back, the show goes on" "active $(active_vt), pid $(main_pid)" back_on_vt1
sed -i 's/"vtSwitching": true/"vtSwitching": false/' /etc/vitrine/vitrine.json
mark "VT switching forbidden"
vitrine ctl reload >/dev/null
eventually reloaded
refused_switch() { journalctl -q -u vitrine.service --since "$since" | grep -q "VT switching is off"; }
keys ctrl-alt-f2
# Nothing may happen: once the player has seen and refused the keys, the VT must still be the show's.
eventually refused_switch
check "with display.vtSwitching false, Ctrl+Alt+F2 does nothing" "active $(active_vt)" back_on_vt1
journalctl -q -u vitrine.service --since "$since" -o cat | tail -20 | sed 's/^/INFO   /'
echo "INFO   player: $(ps -o pid=,user=,tty=,sess= -p "$(main_pid)") session leader $(ps -o tty= -p "$(ps -o sess= -p "$(main_pid)")")"
sed -i 's/"vtSwitching": false/"vtSwitching": true/' /etc/vitrine/vitrine.json
vitrine ctl reload >/dev/null

# The hardened unit must still let the player reach an MQTT broker (RestrictAddressFamilies= once refused every
# network socket): a broker on the guest's loopback, an mqtt section, a reload.
mark "MQTT broker"
mqtt_connected() { journalctl -q -u vitrine.service --since "$since" | grep -q "MQTT: connected to 127.0.0.1:18883"; }
if command -v mosquitto >/dev/null; then
    printf 'listener 18883 127.0.0.1\nallow_anonymous true\nlog_dest none\n' >/run/vitrine-test-mosquitto.conf
    mosquitto -c /run/vitrine-test-mosquitto.conf -d
    # Put back byte for byte afterwards: uninstall keeps a config the owner changed.
    cp -p /etc/vitrine/vitrine.json /run/vitrine-test-config.json
    /usr/bin/python3 -c 'import json, sys
config = json.load(open(sys.argv[1]))
config["mqtt"] = {"host": "127.0.0.1", "port": 18883, "id": "service-test"}
json.dump(config, open(sys.argv[1], "w"), indent=2)' /etc/vitrine/vitrine.json
    vitrine ctl reload >/dev/null
    eventually mqtt_connected
    check "the service reaches an MQTT broker on the network" "$(journalctl -q -u vitrine.service --since "$since" \
        -o cat | grep MQTT | tail -1)" mqtt_connected
    cp -p /run/vitrine-test-config.json /etc/vitrine/vitrine.json
    vitrine ctl reload >/dev/null
    pkill -x mosquitto
else
    check "mosquitto is installed for the MQTT check (make vm-test installs it)" "" false
fi

# The hardened unit must let the web remote write the library (--web gives it ReadWritePaths=): an upload, a
# hide and a delete from a script with the token, as a phone would.
mark "web remote"
web_token() { [ -s /var/lib/vitrine/web-token ]; }
eventually web_token
web_result=$(/usr/bin/python3 - "$source/Config/sample-library" <<'EOF'
import glob, http.client, sys, urllib.parse
token = open("/var/lib/vitrine/web-token").read().strip()
photo = open(sorted(glob.glob(sys.argv[1] + "/*.jpg"))[0], "rb").read()
def call(method, path, body=None, **query):
    connection = http.client.HTTPConnection("127.0.0.1", 8080, timeout=20)
    connection.request(method, path + "?" + urllib.parse.urlencode(query), body=body,
                       headers={"Authorization": "Bearer " + token})
    answer = connection.getresponse()
    return answer.status, answer.read().decode(errors="replace")
results = [call("POST", "/api/photos", photo, category="Trips", name="from phone.jpg"),
           call("POST", "/api/photos/hide", category="Trips", name="from phone.jpg"),
           call("DELETE", "/api/photos", category="Trips", name="from phone.jpg", hidden="1")]
print(" ".join(str(status) for status, _ in results), "|", " | ".join(text for _, text in results))
EOF
)
web_worked() {
    [[ $web_result == "201 200 200 |"* ]] && [ -f "/srv/vitrine/.trash/Trips/from phone.jpg" ] &&
        [ ! -e "/srv/vitrine/Trips/from phone.jpg" ] && [ ! -e "/srv/vitrine/Trips/.hidden/from phone.jpg" ]
}
check "the service's web remote takes an upload, hides it and moves it to the trash" "$web_result" web_worked

mark "stop"
systemctl stop vitrine.service
settle 5
state
check "systemctl stop gives tty1 back" "getty@tty1 active" console_back inactive

mark "start"
systemctl start vitrine.service
settle 8
state
check "systemctl start takes tty1 again" "getty stopped" playing

mark "watchdog"
pid=$(main_pid)
kill -STOP "$pid"
# WatchdogSec=30: the stuck player is killed and a new one started.
within 120 watchdog_restarted
settle 3
state
check "watchdog kills a stuck player and it comes back" "the getty stays away" watchdog_restarted
journalctl -q -o short-monotonic --since "$since" -u vitrine.service | grep -v '^ *$' | tail -12 | sed 's/^/INFO   /'

mark "crash loop"
mkdir -p /run/systemd/system/vitrine.service.d
# The unit's own start limit (five in two minutes), reached without waiting out RestartSec=5 each time.
printf '[Service]\nExecStart=\nExecStart=/bin/false\nRestartSec=1\n' >/run/systemd/system/vitrine.service.d/broken.conf
systemctl daemon-reload
systemctl restart vitrine.service 2>/dev/null
within 120 console_back failed
settle 3
state
check "a crash loop ends in failed, and the console comes back" \
    "Result=$(systemctl show -P Result vitrine.service) NRestarts=$(systemctl show -P NRestarts vitrine.service)" \
    console_back failed
rm -r /run/systemd/system/vitrine.service.d
systemctl daemon-reload
systemctl reset-failed vitrine.service
systemctl start vitrine.service
settle 8
check "reset-failed and start after the crash loop" "playing again" playing

mark "uninstall"
output=$(cd "$source" && deploy/install.sh --uninstall </dev/null 2>&1)
status=$?
printf '%s\n' "$output" | sed 's/^/INFO   /'
settle 5
state
check "uninstall" "exit $status" test "$status" = 0
check "uninstall gives tty1 back" "getty@tty1 active" console_back inactive
check "uninstall removes the user, binary, units and config" "" uninstalled
check "uninstall keeps the library" "/srv/vitrine/Trips" test -n "$(ls /srv/vitrine/Trips)"

# shellcheck source=Tests/Deploy/appliance_guest.sh
source "$(dirname "$0")/appliance_guest.sh"

echo "INFO --- done"
systemctl --no-block poweroff

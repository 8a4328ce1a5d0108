#!/bin/bash
# Guest agent: PID 1 of the VM once init.sh has switched to the host's root (read-only, under a tmpfs overlay).
# Sets the guest up, loads the drivers of the virtual devices, writes /share/ready, then runs the commands the
# host drops in /share, one after another: cmd-N.sh (first line "# timeout SECONDS") -> out-N.txt (stdout and
# stderr) and rc-N (exit status, written last). Background processes started by a command keep running.
# Bash, for `read -t`: under TCG every fork+exec costs about 70 ms of guest CPU, so an idle loop of `sleep 0.05`
# would eat most of the CPU that the programs under test need; waiting on a never-written FIFO costs nothing.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TERM=linux
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /share
mount -t devpts devpts /dev/pts
# The guest's own /tmp is a tmpfs (sockets, and files that must outlive a suspend, stay off 9p), but a checkout
# under the host's /tmp (CI may clone there), this script's own, must still be found at its path: a symlink
# through a bind mount of the host's /tmp. One link, not one per host entry: each `ln` costs a fork under TCG.
mkdir -p /host-tmp && mount --bind /tmp /host-tmp
for dir in /dev/shm /run /tmp /var/tmp /var/lib/udev /root; do mkdir -p "$dir" && mount -t tmpfs tmpfs "$dir"; done
case $0 in
/tmp/*/*)
    checkout=${0#/tmp/}
    ln -s "/host-tmp/${checkout%%/*}" "/tmp/${checkout%%/*}"
    ;;
esac
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 share /share
mkfifo /run/agent.idle && exec 3<>/run/agent.idle

# Load a driver for every device, as udev would (no udev here). Loading virtio_pci makes virtio devices
# appear, so look again until a DRM card with a connector is there (at most about 20 s).
# Every device's modalias as one word each, read with the `read` builtin rather than `$(cat ...)`: no fork.
load_drivers() {
    local file
    local -a aliases=() words
    for file in /sys/bus/*/devices/*/modalias; do
        words=()
        read -r -a words 2>/dev/null <"$file" || true
        aliases+=("${words[@]}")
    done
    modprobe -qab "${aliases[@]}"
}
# A kernel other than the host's (vm.modules=DIR, newer_kernel.sh's) has its modules in a folder of their own: the
# overlay root takes a link to it where modprobe looks.
for word in $(</proc/cmdline); do
    case $word in
    vm.modules=*)
        dir=${word#vm.modules=}
        [[ $dir == /tmp/* && ! -e $dir ]] && dir=/host-tmp/${dir#/tmp/}
        mkdir -p /usr/lib/modules && ln -sfn "$dir" "/usr/lib/modules/$(uname -r)"
        ;;
    esac
done
# Modules asked for on the kernel command line come first, before any display driver binds: vm.preload=a,b by
# name, then vm.insmod=/path/a.ko,... by file (out-of-tree test modules such as vkms).
for word in $(</proc/cmdline); do
    case $word in vm.preload=*) IFS=, read -r -a preload <<<"${word#vm.preload=}" && modprobe -a "${preload[@]}" ;; esac
done
for word in $(</proc/cmdline); do
    case $word in
    vm.insmod=*)
        IFS=, read -r -a files <<<"${word#vm.insmod=}"
        # The guest's /tmp is its own tmpfs: a module built under the host's /tmp is under /host-tmp.
        for file in "${files[@]}"; do
            [[ $file == /tmp/* && ! -e $file ]] && file=/host-tmp/${file#/tmp/}
            insmod "$file"
        done
        ;;
    esac
done
# A card with a connector, not just any card: a preloaded vgem is card0 but drives no screen.
tries=0
while ! compgen -G '/sys/class/drm/card*-*' >/dev/null && [ $tries -lt 200 ]; do
    [ $((tries % 10)) -eq 0 ] && load_drivers
    compgen -G '/sys/class/drm/card*-*' >/dev/null || read -r -t 0.1 -u 3
    tries=$((tries + 1))
done
{
    echo "uptime $(cut -d' ' -f1 /proc/uptime)"
    echo "kernel $(uname -r)"
    for card in /dev/dri/card*; do [ -e "$card" ] && echo "card $card"; done
} >/share/ready.tmp
mv /share/ready.tmp /share/ready
echo "agent: ready after $(cut -d' ' -f1 /proc/uptime) s"

n=1
while :; do
    command=/share/cmd-$n.sh
    if [ -e "$command" ]; then
        read -r _ _ seconds <"$command"
        (cd /root && exec timeout -k 5 "${seconds:-60}" sh "$command" 3<&-) </dev/null >"/share/out-$n.txt" 2>&1
        echo $? >"/share/rc-$n.tmp"
        mv "/share/rc-$n.tmp" "/share/rc-$n"
        n=$((n + 1))
    else
        read -r -t 0.05 -u 3
    fi
done

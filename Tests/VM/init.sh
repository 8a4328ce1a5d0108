#!/bin/sh
# /init of the VM's initramfs (busybox only). Loads the 9p and overlay modules, mounts the host's root
# read-only over virtio-9p under a tmpfs overlay (the guest may write anywhere; the host's files never change),
# and hands PID 1 over to the guest agent named by vm.agent= on the kernel command line.
# Any failure ends init, the kernel panics (panic=-1) and QEMU (-no-reboot) exits: the host sees it at once.
set -e
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
while read -r module; do insmod "/modules/$module"; done </modules/order
agent=$(sed -n 's/.*vm\.agent=\([^ ]*\).*/\1/p' /proc/cmdline)
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,ro hostroot /lower
mount -t tmpfs -o mode=0755 tmpfs /rw
mkdir /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /newroot
mount --move /dev /newroot/dev
umount /proc
exec switch_root /newroot /bin/bash "$agent"

#!/bin/bash
# PID 1 of the service test's VM after Tests/VM/init.sh's switch_root (Tests/Deploy/test_service_vm.py): mounts
# the share, enables the unit that runs the guest script once the system is up, and hands PID 1 to systemd.
# The guest's files come from the share: systemd-tmpfiles empties /tmp at boot, and a checkout may live there.
mount -t proc proc /proc
# /tmp starts empty on a tmpfs of its own: through the overlay it would be the host's /tmp, and systemd-tmpfiles
# emptying a host /tmp of a few hundred thousand files (a benchmark's library) held the boot for over 16 minutes.
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /tmp
mkdir -p /share
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 share /share
# What the host's packages enabled (Apache, Samba, Mosquitto and Avahi for the other tests, apt's and man-db's timers
# that catch up at boot) has no place on a frame and held a boot under TCG for minutes: disabled in the overlay.
rm -f /etc/systemd/system/multi-user.target.wants/* /etc/systemd/system/timers.target.wants/* \
    /etc/systemd/system/sockets.target.wants/*
cp /share/vitrine-test.service /etc/systemd/system/
mkdir -p /etc/systemd/system/multi-user.target.wants
ln -sf /etc/systemd/system/vitrine-test.service /etc/systemd/system/multi-user.target.wants/
umount /proc
exec /lib/systemd/systemd

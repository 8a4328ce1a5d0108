#!/usr/bin/python3
"""Runs inside the guest: creates a multitouch touchscreen through /dev/uinput (slots, tracking ids, direct
input) and keeps it plugged in while it performs gestures asked for by command files.

Usage: uinput_touch.py serve DIR LOG

Once the player's log LOG names the new device (udev tagged it and libinput added it), DIR/ready is written.
Then DIR/1.cmd, DIR/2.cmd, ... are performed in turn, each answered with DIR/N.done; a command is
`tap X,Y`, `swipe X1,Y1 X2,Y2`, `long X,Y` (coordinates 0...1) or `unplug`, which removes the device and ends.
The device stays while the player reads its events: an evdev client loses what it has not read at removal.
"""
import fcntl
import os
import struct
import sys
import time

EV_SYN, EV_KEY, EV_ABS = 0, 1, 3
SYN_REPORT = 0
BTN_TOUCH = 0x14A
ABS_X, ABS_Y = 0x00, 0x01
ABS_MT_SLOT, ABS_MT_POSITION_X, ABS_MT_POSITION_Y, ABS_MT_TRACKING_ID = 0x2F, 0x35, 0x36, 0x39
INPUT_PROP_DIRECT = 0x01
UI_SET_EVBIT, UI_SET_KEYBIT, UI_SET_ABSBIT, UI_SET_PROPBIT = 0x40045564, 0x40045565, 0x40045567, 0x4004556E
UI_DEV_CREATE, UI_DEV_DESTROY = 0x5501, 0x5502
MAX = 4095


def emit(fd, kind, code, value):
    now = time.time()
    os.write(fd, struct.pack("llHHi", int(now), int((now % 1) * 1e6), kind, code, value))


def create():
    fd = os.open("/dev/uinput", os.O_WRONLY | os.O_NONBLOCK)
    for bit in (EV_SYN, EV_KEY, EV_ABS):
        fcntl.ioctl(fd, UI_SET_EVBIT, bit)
    fcntl.ioctl(fd, UI_SET_KEYBIT, BTN_TOUCH)
    for axis in (ABS_X, ABS_Y, ABS_MT_SLOT, ABS_MT_POSITION_X, ABS_MT_POSITION_Y, ABS_MT_TRACKING_ID):
        fcntl.ioctl(fd, UI_SET_ABSBIT, axis)
    fcntl.ioctl(fd, UI_SET_PROPBIT, INPUT_PROP_DIRECT)
    absmax, absmin = [0] * 64, [0] * 64
    for axis in (ABS_X, ABS_Y, ABS_MT_POSITION_X, ABS_MT_POSITION_Y):
        absmax[axis] = MAX
    absmax[ABS_MT_SLOT] = 9
    absmax[ABS_MT_TRACKING_ID] = 65535
    name = b"Vitrine test touchscreen".ljust(80, b"\0")
    device = name + struct.pack("HHHHi", 0x06, 0x1234, 0x5678, 1, 0)
    device += struct.pack("64i", *absmax) + struct.pack("64i", *absmin) + struct.pack("64i", *[0] * 64) * 2
    os.write(fd, device)
    fcntl.ioctl(fd, UI_DEV_CREATE)
    return fd


def finger(fd, points, seconds):
    emit(fd, EV_ABS, ABS_MT_SLOT, 0)
    emit(fd, EV_ABS, ABS_MT_TRACKING_ID, 1)
    emit(fd, EV_KEY, BTN_TOUCH, 1)
    for index, (x, y) in enumerate(points):
        if index:
            time.sleep(seconds / max(1, len(points) - 1))
        for code, value in ((ABS_MT_POSITION_X, x), (ABS_MT_POSITION_Y, y), (ABS_X, x), (ABS_Y, y)):
            emit(fd, EV_ABS, code, int(value * MAX))
        emit(fd, EV_SYN, SYN_REPORT, 0)
    if len(points) == 1:
        time.sleep(seconds)
    emit(fd, EV_ABS, ABS_MT_TRACKING_ID, -1)
    emit(fd, EV_KEY, BTN_TOUCH, 0)
    emit(fd, EV_SYN, SYN_REPORT, 0)


NAME = "Vitrine test touchscreen"


def wait_until(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            sys.exit(f"uinput_touch: timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


def logged_device(log):
    try:
        with open(log, errors="replace") as f:
            return f"input device: {NAME}" in f.read()
    except OSError:
        return False


def gesture(fd, kind, coordinates):
    points = [tuple(float(v) for v in c.split(",")) for c in coordinates]
    if kind == "swipe":
        a, b = points
        points = [a, ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2), b]
    finger(fd, points, {"tap": 0.08, "swipe": 0.25, "long": 1.2}[kind])


def serve(directory, log):
    fd = create()
    wait_until(lambda: logged_device(log), 60, f"the player to log {NAME!r} in {log}")
    with open(f"{directory}/ready", "w") as f:
        f.write("ready\n")
    number = 1
    while True:
        path = f"{directory}/{number}.cmd"
        wait_until(lambda: os.path.exists(path), 3600, path)
        with open(path) as f:
            kind, *coordinates = f.read().split()
        if kind == "unplug":
            break
        gesture(fd, kind, coordinates)
        with open(f"{directory}/{number}.done", "w") as f:
            f.write("done\n")
        number += 1
    fcntl.ioctl(fd, UI_DEV_DESTROY)
    os.close(fd)
    with open(f"{directory}/{number}.done", "w") as f:
        f.write("unplugged\n")


def main():
    if len(sys.argv) != 4 or sys.argv[1] != "serve":
        sys.exit(__doc__)
    serve(sys.argv[2], sys.argv[3])


if __name__ == "__main__":
    main()

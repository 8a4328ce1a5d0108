#!/usr/bin/python3
"""Suspend and resume on a real kernel: S3 (`echo mem`, woken by QMP system_wakeup) and, in its own boot, s2idle
(`echo freeze`, woken by the ACPI power button). The player runs from tmpfs, because the 9p root does not survive
a sleep; it logs to the serial console. After the wake the same photo must be on screen, stay for a full interval,
and exactly one advance must follow. Prints `N passed, M failed`; skips when QEMU or a kernel is missing.

Usage: test_suspend.py [--vitrine PATH]
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import test_display as display  # noqa: E402
import vm as vmlib  # noqa: E402

record = display.record
INTERVAL = 4


def prepare(vm, vitrine):
    """Copies the player, the libraries it links and the library into tmpfs, and starts it there."""
    script = f"""
set -e
mkdir -p /tmp/v /tmp/lib
cp {vitrine} /tmp/v/vitrine
ldd {vitrine} | awk '/=>/ {{print $3}} /ld-linux/ {{print $1}}' | while read lib; do cp -L "$lib" /tmp/v/; done
cp -r /share/lib/Test /tmp/lib/
cp {REPO}/Config/devices.json /tmp/devices.json
echo '{{"library": "/tmp/lib", "deviceTable": "/tmp/devices.json", "interval": {INTERVAL}, "transition": "none", "pauseOnInput": 0, "controlSocket": "/tmp/vitrine.sock", "display": {{"backend": "drm"}}}}' > /tmp/vitrine.json
setsid sh -c 'exec /tmp/v/ld-linux-x86-64.so.2 --library-path /tmp/v /tmp/v/vitrine play --config /tmp/vitrine.json >/dev/ttyS0 2>&1' </dev/null >/dev/null 2>&1 &
"""
    rc, out = vm.run(script, timeout=60)
    return rc == 0, out


def shown(dump, references):
    scores = [display.psnr(dump, r) for r in references]
    best = max(range(len(scores)), key=lambda i: scores[i])
    return best if scores[best] >= 40 else None


def timeline(vm, references, seconds):
    """(time since start, photo index or None) every 0.25 s."""
    start = time.monotonic()
    points = []
    while time.monotonic() - start < seconds:
        points.append((time.monotonic() - start, shown(vm.screendump(), references)))
        time.sleep(0.25)
    return points


def sleep_and_wake(vm, vitrine, label, state, wake):
    display.make_library(vm.share)
    references = [display.render(vitrine, f"{vm.share}/lib/Test/{name}", 800, 480, vm.share)
                  for name, _, _ in display.PHOTOS]
    ok, out = prepare(vm, vitrine)
    if not record(ok, f"{label}: the player runs from tmpfs"):
        print(out)
        return
    dump, ok = display.wait_for(vm, lambda d: shown(d, references) == 1, 40)
    record(ok, f"{label}: the show reaches the second photo before the sleep")
    if state == "freeze":
        vm.run("modprobe button")
    vm.run(f"(sleep 0.3; echo {state} > /sys/power/state) >/dev/null 2>&1 &")
    before = shown(vm.screendump(), references)
    if state == "mem":
        deadline = time.monotonic() + 20
        while vm.qmp("query-status")["status"] != "suspended" and time.monotonic() < deadline:
            time.sleep(0.2)
        record(vm.qmp("query-status")["status"] == "suspended", f"{label}: the guest is suspended (S3)")
    time.sleep(INTERVAL + 3)
    wake()
    points = timeline(vm, references, 2 * INTERVAL + 3)
    first = next((index for _, index in points if index is not None), None)
    record(first == before, f"{label}: after the wake photo {first} is on screen, as before the sleep ({before})")
    changes = [(t, index) for (t, index), (_, previous) in zip(points[1:], points) if index is not None
               and previous is not None and index != previous]
    if changes:
        t, index = changes[0]
        record(INTERVAL - 1.2 <= t <= INTERVAL + 2.5 and index == (before + 1) % 3,
               f"{label}: a full interval after the wake ({t:.1f} s of {INTERVAL}) exactly one advance, to photo "
               f"{index}")
    else:
        record(False, f"{label}: no advance after the wake ({points[-6:]})")
    with open(vm.serial_log, errors="replace") as f:
        log = f.read()
    record("the system slept" in log and "resumed after sleep" in log,
           f"{label}: the player noticed the sleep ({[l for l in log.splitlines() if 'slept' in l][-1:]})")


def main():
    args = vmlib.arguments(__doc__)
    vitrine = args.vitrine
    ok, reason = vmlib.check()
    if not ok:
        return vmlib.skipped("VM suspend tests", reason)
    # s2idle first, in its own boot: after an S3 cycle QEMU cannot wake a guest from s2idle here.
    for state, label in (("freeze", "s2idle"), ("mem", "S3")):
        try:
            with vmlib.VM(device="bochs", width=800, height=480) as vm:
                if state == "freeze":
                    sleep_and_wake(vm, vitrine, label, state, lambda: vm.qmp("system_powerdown"))
                else:
                    sleep_and_wake(vm, vitrine, label, state, lambda: vm.qmp("system_wakeup"))
        except Exception as error:
            record(False, f"{label}: {type(error).__name__}: {error}")
    return display.summary()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""The screen does what it was told, on four real kernel DRM drivers (virtio-gpu, bochs, qxl, cirrus) in QEMU
guests, two guests at a time. On each, with the player on VT 1 as a boot service runs it, and crossfades on:

- started inside the schedule's off hours, the screen is dark from the first second: no photo ever on it, the
  connector's DPMS reads Off;
- `screen on` shows a photo; `screen off` turns it off, and `ctl next`, `ctl prev` and the fades they start
  leave it off (DPMS Off, the screendump shows no photo, no page flip is refused); `screen on` brings the slide
  the player says is current back;
- a VT switch in the middle of a crossfade and back restores the picture, and later slides come with page flips,
  not modesets (`vitrine ctl status` counts both);
- the log has no fallback line (page flip refused, no flip event) and SIGTERM ends the player with status 0.

And the Raspberry Pi 4/5 card layout: vgem loaded first (a card without KMS, as v3d is), the panel's output
unplugged at start: `--display auto` and `--display drm` both wait asleep and show the photo on plug.

Prints `N passed, M failed`. Without QEMU or a kernel it skips with the reason, except under CI=true, where
that is a failure.

Usage: test_power.py [--vitrine PATH] [--only DEVICE...]
"""
import json
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import test_display as display  # noqa: E402
import vm as vmlib  # noqa: E402
from harness import record, results, summary  # noqa: E402  (Tests/harness.py)

until = display.until

DEVICES = [("virtio", 800, 480), ("bochs", 800, 480), ("qxl", 800, 600), ("cirrus", 1024, 768)]
FALLBACK_LINES = ("page flip refused", "no page-flip event", "bug:", "setting the mode")
lock = threading.Lock()


class Guest:
    def __init__(self, vm, vitrine, label, references):
        self.vm, self.vitrine, self.label, self.references = vm, vitrine, label, references

    def status(self):
        rc, out = self.vm.run(f"{self.vitrine} ctl --control /tmp/vitrine.sock status")
        try:
            return json.loads(out) if rc == 0 else None
        except ValueError:
            return None

    def dpms(self):
        """The DPMS state of the connected connector, as the kernel reports it in sysfs."""
        rc, out = self.vm.run("for c in /sys/class/drm/card*-*; do [ \"$(cat $c/status)\" = connected ] && "
                              "cat $c/dpms; done")
        return out.strip().splitlines()[0] if out.strip() else "?"

    def photo(self, dump):
        """The index of the photo the screendump shows whole, or None."""
        scores = [display.psnr(dump, r) for r in self.references]
        best = max(range(len(scores)), key=lambda i: scores[i])
        return best if scores[best] >= 35 else None

    def dark(self, dump):
        """No photo on screen and next to no light (a photo with black margins still scores well against black,
        so the light decides)."""
        gray = dump.convert("L")
        mean = sum(gray.getdata()) / (gray.width * gray.height)
        best = max(display.psnr(dump, r) for r in self.references)
        if best >= 35 or mean >= 8:
            name = f"/tmp/vitrine-power-{self.label.split()[0]}.png"
            dump.save(name)
            print(f"    {self.label}: not dark: mean {mean:.1f}, best PSNR {best:.1f}, size {dump.size} ({name})")
            return False
        return True

    def ctl(self, command):
        rc, out = self.vm.run(f"{self.vitrine} ctl --control /tmp/vitrine.sock {command}")
        return rc == 0

    def log(self):
        with open(f"{self.vm.share}/power.log", errors="replace") as f:
            return f.read()


def schedule_off_now():
    """A screenSchedule whose off hours are now (guest and host share the clock): off an hour ago, on in an hour."""
    now = time.localtime()
    minute = now.tm_hour * 60 + now.tm_min

    def clock(m):
        m %= 24 * 60
        return f"{m // 60:02d}:{m % 60:02d}"
    return {"off": clock(minute - 60), "on": clock(minute + 60)}


def run_device(vitrine, device, w, h):
    label = f"{device} {w}x{h}"
    with vmlib.VM(device=device, width=w, height=h) as vm:
        share = vm.share
        display.make_library(share)
        references = [display.render(vitrine, f"{share}/lib/Test/{name}", w, h, share)
                      for name, _, _ in display.PHOTOS]
        g = Guest(vm, vitrine, label, references)
        config = {"library": "/share/lib", "deviceTable": f"{REPO}/Config/devices.json", "interval": 1.5,
                  "transition": "fade", "transitionSeconds": 2, "controlSocket": "/tmp/vitrine.sock",
                  "display": {"backend": "drm"}, "screenSchedule": schedule_off_now()}
        with open(f"{share}/power.json", "w") as f:
            json.dump(config, f)
        vm.spawn("power", f"exec busybox openvt -c 1 -f -s -w -- sh -c "
                          f"'exec {vitrine} play --config /share/power.json 2>/share/power.log'")

        # Dark from the first second: every screendump from the start until the player answers, and a while after.
        started = time.monotonic()
        seen_photo, answered = False, None
        while time.monotonic() - started < 60:
            if g.photo(vm.screendump()) is not None:
                seen_photo = True
            if answered is None and g.status() is not None:
                answered = time.monotonic()
            if answered is not None and time.monotonic() - answered > 4:
                break
        state = g.status() or {}
        record(answered is not None and not seen_photo and state.get("screen") == "off",
               f"{label}: started inside off hours, no photo ever reaches the screen (status {state.get('screen')}, "
               f"{state.get('presented')} slides taken)")
        record(g.dpms() == "Off", f"{label}: the connector's DPMS reads Off from the start ({g.dpms()})")
        record(g.dark(vm.screendump()), f"{label}: the screendump is dark inside off hours")

        g.ctl("screen on")
        dump, ok = display.wait_for(vm, lambda d: g.photo(d) is not None, 15)
        record(ok and g.dpms() == "On", f"{label}: `screen on` shows a photo (DPMS {g.dpms()})")

        g.ctl("screen off")
        done, value = until(lambda: (g.dpms() == "Off", None), 10)
        record(done, f"{label}: `screen off` turns the connector off")
        flips_before = (g.status() or {}).get("flips")
        g.ctl("next")
        g.ctl("next")
        g.ctl("prev")
        # QEMU's qxl and cirrus keep showing their last picture whatever the connector's DPMS says (their display
        # surface has no blanking): there the check is that the picture does not change while off.
        frozen = device in ("qxl", "cirrus")
        first = vm.screendump()
        dark_all, lit = True, []
        sampled = time.monotonic()
        while time.monotonic() - sampled < 5:
            dump = vm.screendump()
            if (display.psnr(dump, first) < 99) if frozen else not g.dark(dump):
                dark_all = False
            state = g.dpms()
            if state != "Off":
                lit.append(state)
        after = g.status() or {}
        what = "the picture QEMU keeps does not change" if frozen else "the screen stays dark"
        record(dark_all and not lit, f"{label}: `ctl next`, `next`, `prev` with fades while off: {what} and DPMS "
                                     f"reads Off for 5 s (DPMS seen: {sorted(set(lit)) or ['Off']})")
        # Both counts must have been read: a status that failed twice is no proof of no flips.
        record(flips_before is not None and after.get("flips") == flips_before,
               f"{label}: no page flip was asked for while off (flips {flips_before} -> {after.get('flips')})")
        current = after.get("slide")
        g.ctl("screen on")
        index = next((i for i, (name, _, _) in enumerate(display.PHOTOS) if name.startswith(str(current))), None)
        dump, ok = display.wait_for(vm, lambda d: index is not None and g.photo(d) == index, 15)
        record(ok and g.dpms() == "On",
               f"{label}: `screen on` brings back the current slide {current} (shown: {g.photo(dump)})")

        # A VT switch in the middle of a crossfade, and back.
        g.ctl("next")
        time.sleep(0.3)
        vm.run("busybox chvt 2")
        done, state = until(lambda: (lambda s: ("vtAway" in (s or {}).get("paused", []), s))(g.status()), 10)
        record(done, f"{label}: switched to VT 2 in the middle of a crossfade, the show holds")
        vm.run("busybox chvt 1")
        dump, ok = display.wait_for(vm, lambda d: g.photo(d) is not None, 15)
        back = g.status() or {}
        record(ok and "vtAway" not in back.get("paused", ["vtAway"]),
               f"{label}: back on VT 1 a whole photo is on screen and the show goes on")
        done, later = until(lambda: (lambda s: ((s or {}).get("presented", 0) >= back.get("presented", 0) + 2, s))(
            g.status()), 20, step=0.5)
        later = later or {}
        record(done and later.get("modesets") == back.get("modesets") and later.get("flips", 0) > back.get("flips", 0),
               f"{label}: after the return the slides come with flips, not modesets (modesets "
               f"{back.get('modesets')} -> {later.get('modesets')}, flips {back.get('flips')} -> {later.get('flips')})")

        vm.run("kill -TERM $(pidof vitrine)")
        vm.wait("power", 30)
        log = g.log()
        fallback = [line for line in log.splitlines() if any(word in line for word in FALLBACK_LINES)]
        record(not fallback and "stopping (signal 15)" in log,
               f"{label}: no fallback line in the log, stopped on SIGTERM ({fallback[:2]})")
        if fallback or not all(results):
            print(f"--- {label} log\n" + log[-3000:])


def run_render_only_card(vitrine):
    """The Raspberry Pi 4/5 layout: a card without KMS first (vgem, as v3d is), the display card after it with its
    output unplugged at start. `--display auto` and `--display drm` both wait asleep and show on plug."""
    label = "vgem + virtio (Pi 4/5 layout)"
    with vmlib.VM(device="virtio", width=800, height=480, preload=["vgem"]) as vm:
        share = vm.share
        display.make_library(share)
        reference = display.render(vitrine, f"{share}/lib/Test/01-landscape.jpg", 800, 480, share)
        rc, out = vm.run("cat /sys/class/drm/card0/device/driver/module/drivers/*/uevent 2>/dev/null; "
                         "ls /sys/class/drm; readlink /sys/class/drm/card0/device/driver")
        record("card1-Virtual-1" in out and "card0-" not in out,
               f"{label}: card0 has no connectors, card1 drives the panel ({' '.join(out.split())[:100]})")
        plug = "/sys/class/drm/card1-Virtual-1/status"
        announce = "echo change > /sys/class/drm/card1/uevent"
        for backend in ("auto", "drm"):
            with open(f"{share}/pi.json", "w") as f:
                json.dump({"library": "/share/lib", "deviceTable": f"{REPO}/Config/devices.json", "interval": 30,
                           "controlSocket": "/tmp/vitrine.sock", "display": {"backend": backend}}, f)
            vm.run(f"echo off > {plug}")
            vm.spawn("pi", f"exec {vitrine} play --config /share/pi.json")
            rc, out = vm.run("for i in $(seq 150); do grep -q 'waiting for one' /share/pi.out && break; sleep 0.2; "
                             "done; cat /share/pi.out; grep -E '^State' /proc/$(cat /share/pi.pid)/status",
                             timeout=40)
            record("waiting for one to be plugged in" in out and "(sleeping)" in out and "fbdev" not in out,
                   f"{label}: --display {backend} with the output unplugged waits asleep "
                   f"({out.strip().splitlines()[-2:]})")
            vm.run(f"echo detect > {plug}; {announce}")
            dump, ok = display.wait_for(vm, lambda d: display.psnr(d, reference) >= 40, 60)
            record(ok, f"{label}: --display {backend} shows the first photo once plugged in "
                       f"(PSNR {display.psnr(dump, reference):.1f})")
            status, output = vm.stop("pi")
            if not ok or status != 0:
                print(output[-2000:])


def main():
    def options(p):
        p.add_argument("--only", nargs="*", default=None, help="devices: virtio bochs qxl cirrus vgem")
        p.add_argument("--parallel", type=int, default=2, help="guests at a time")
    args = vmlib.arguments(__doc__, options)
    ok, reason = vmlib.check()
    if not ok:
        return vmlib.skipped("VM power tests", reason)
    devices = [d for d in DEVICES if args.only is None or d[0] in args.only]

    def worker(queue):
        while queue:
            with lock:
                if not queue:
                    return
                device, w, h = queue.pop(0)
            try:
                if device == "vgem":
                    run_render_only_card(args.vitrine)
                else:
                    run_device(args.vitrine, device, w, h)
            except Exception as error:  # a hung or crashed guest fails this device, not the whole run
                record(False, f"{device} {w}x{h}: {type(error).__name__}: {error}")

    queue = list(devices)
    if args.only is None or "vgem" in args.only:
        queue.append(("vgem", 800, 480))
    threads = [threading.Thread(target=worker, args=(queue,)) for _ in range(max(1, args.parallel))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return summary()


if __name__ == "__main__":
    sys.exit(main())

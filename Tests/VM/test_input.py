#!/usr/bin/python3
"""Keys and touch on a real kernel: a virtio keyboard and tablet in a QEMU guest (udevd running, libinput on
seat0), driven over QMP; screendumps and `vitrine ctl status` confirm each change. Prints `N passed, M failed`;
skips (exit 0) with the reason when QEMU or a kernel is missing.

Usage: test_input.py [--vitrine PATH]
"""
import json
import os
import sys
import time

from PIL import Image, ImageDraw

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import test_display as display  # noqa: E402
import vm as vmlib  # noqa: E402

record = display.record


def make_library(share):
    display.make_library(share)
    os.makedirs(f"{share}/lib/Zeta")
    image = Image.new("RGB", (1000, 600), (10, 120, 90))
    ImageDraw.Draw(image).ellipse([200, 100, 800, 500], fill=(240, 240, 60))
    image.save(f"{share}/lib/Zeta/only.jpg", quality=92)


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


class Touchscreen:
    """A multitouch touchscreen made inside the guest through /dev/uinput (uinput_touch.py), plugged in while the
    show runs and kept until unplug(): gestures are asked for by command files on the share."""

    def __init__(self, vm):
        self.vm = vm
        self.folder = f"{vm.share}/touch"
        self.number = 0
        os.makedirs(self.folder)
        vm.spawn("touch", f"modprobe uinput && exec /usr/bin/python3 {HERE}/uinput_touch.py serve /share/touch "
                          "/share/player.out")
        # Ready once the player has logged the new device: udev tagged it and libinput added it.
        vm.wait_until(lambda: os.path.exists(f"{self.folder}/ready"), 60, "the player to pick up the touchscreen")

    def send(self, command):
        self.number += 1
        path = f"{self.folder}/{self.number}.cmd"
        with open(path + ".tmp", "w") as f:
            f.write(command + "\n")
        os.replace(path + ".tmp", path)
        self.vm.wait_until(lambda: os.path.exists(f"{self.folder}/{self.number}.done"), 30, f"touch: {command}")

    def unplug(self):
        self.send("unplug")
        return self.vm.wait("touch", 30)


def run(vitrine):
    with vmlib.VM(device="virtio", width=800, height=480, inputs=True) as vm:
        share = vm.share
        make_library(share)
        names = [f"Test/{name}" for name, _, _ in display.PHOTOS] + ["Zeta/only.jpg"]
        refs = [display.render(vitrine, f"{share}/lib/{name}", 800, 480, share) for name in names]
        rc, out = vm.run("/lib/systemd/systemd-udevd --daemon && udevadm trigger --action=add "
                         "--subsystem-match=input --subsystem-match=drm && udevadm settle -t 20", timeout=60)
        record(rc == 0, f"udevd runs in the guest ({out.strip()[-80:]})")
        with open(f"{share}/vitrine.json", "w") as f:
            f.write('{"library": "/share/lib", "deviceTable": "%s/Config/devices.json", "interval": 3, '
                    '"transition": "none", "pauseOnInput": 4, "controlSocket": "/tmp/vitrine.sock", "display": {"backend": "drm"}}\n'
                    % REPO)
        vm.spawn("player", f"exec {vitrine} play --config /share/vitrine.json")
        status = f"{vitrine} ctl --control /tmp/vitrine.sock status"

        def status_until(predicate, timeout=8):
            """`vitrine ctl status` until predicate(answer) holds: (whether it did, the last answer)."""
            deadline = time.monotonic() + timeout
            while True:
                rc, out = vm.run(status)
                if (rc == 0 and predicate(out)) or time.monotonic() > deadline:
                    return rc == 0 and predicate(out), out
                time.sleep(0.2)

        def upper(image):
            # The picture above where a banner or the pause sign may be drawn.
            return image.crop((0, 0, 800, 330))

        def lower(image):
            # Where the banner and the pause sign go: bottom centre.
            return image.crop((360, 395, 440, 445))

        def marked(image, index):
            """Most of the bottom-centre patch changed against the rendered photo: text is drawn there."""
            a, b = lower(image).convert("L"), lower(refs[index]).convert("L")
            changed = sum(1 for x, y in zip(a.getdata(), b.getdata()) if abs(x - y) > 40)
            return changed > 0.5 * a.width * a.height

        def shows(index, timeout=8):
            dump, ok = display.wait_for(vm, lambda d: display.psnr(upper(d), upper(refs[index])) >= 40, timeout)
            return ok

        def paused_on(answer):
            """The index in `refs` of the Test slide a status answer reports (0 when it cannot be read)."""
            try:
                return max(0, int(json.loads(answer)["position"]) - 1) % len(display.PHOTOS)
            except (ValueError, KeyError, TypeError):
                return 0

        def after(index):
            return (index + 1) % len(display.PHOTOS)

        record(shows(0, 60), "the first photo is on screen")
        held = ""
        for qcode, index, what in [("right", 1, "Right: next photo"), ("left", 0, "Left: previous photo"),
                                   ("down", 3, "Down: next category"), ("up", 0, "Up: previous category")]:
            vm.key(qcode)
            # Asked at once: the hold lasts 4 s from the key, and a loaded host's screendumps can take that long.
            rc, held = vm.run(status)
            record(shows(index), f"{what} (screendump matches {names[index]})")
        record('"inputHold"' in held, f"after a key the timer is held for pauseOnInput ({held.strip()[:90]})")
        # The category banner: text over the bottom of the picture for a few seconds, then the clean picture.
        vm.key("down")
        dump, ok = display.wait_for(vm, lambda d: display.psnr(upper(d), upper(refs[3])) >= 40 and marked(d, 3), 5)
        if not ok:
            dump.save("/tmp/vitrine-banner-failure.png")
        record(ok, "a category switch shows a banner over the bottom of the new category's photo")
        dump, ok = display.wait_for(vm, lambda d: display.psnr(d, refs[3]) >= 40, 8)
        record(ok, "the banner goes after a few seconds, leaving the photo as rendered")
        vm.key("up")
        record(shows(0), "Up: back to the first category")
        pressed = time.monotonic()
        vm.key("pgdn")
        record(shows(1), "PageDown: next photo")
        time.sleep(max(0, pressed + 3.2 - time.monotonic()))
        still = display.psnr(vm.screendump(), refs[1]) >= 40
        record(still, "the slide stays while the 4 s input hold lasts (interval 3 s)")
        record(shows(2, 10), "then the show goes on by itself")

        # The tablet's taps and swipes while the show is paused by the user, so the timer cannot move it under them:
        # the swipes are checked against the slide the tap paused on (from the status answer).
        vm.touch([(0.5, 0.5)], seconds=0.05)
        ok, out = status_until(lambda out: '"user"' in out)
        record(ok, f"tablet tap: paused by the user ({out.strip()[:90]})")
        paused = paused_on(out)
        dump, ok = display.wait_for(
            vm, lambda d: display.psnr(upper(d), upper(refs[paused])) >= 40 and marked(d, paused), 5)
        record(ok, "while paused a pause sign is over the bottom of the photo")
        vm.touch([(0.8, 0.5), (0.5, 0.5), (0.2, 0.5)])
        record(shows(after(paused)), "tablet swipe left: next photo")
        vm.touch([(0.2, 0.5), (0.5, 0.52), (0.8, 0.5)])
        record(shows(paused), "tablet swipe right: previous photo")
        vm.key("spc")
        ok, out = status_until(lambda out: '"user"' not in out)
        record(ok, f"Space: resumed ({out.strip()[:90]})")
        dump, ok = display.wait_for(vm, lambda d: display.psnr(lower(d), lower(refs[paused])) >= 40, 5)
        record(ok, "resumed, the pause sign is gone")

        # A multitouch touchscreen made inside the guest through /dev/uinput, plugged in while the show runs.
        touch = Touchscreen(vm)
        # The first touches first: a tap must pause. libinput has the device once the player logs it, but under TCG
        # a first swipe on a fresh device was once lost (in five runs); the tap is repeated (up to three times,
        # reported) until the pause shows, so the swipes below start on a device that is known to deliver.
        taps = 0
        ok = False
        while not ok and taps < 3:
            touch.send("tap 0.5,0.5")
            taps += 1
            ok, out = status_until(lambda out: '"user"' in out)
        record(ok, f"touchscreen tap: paused (tap {taps} of up to 3; {out.strip()[:70]})")
        # Swipes while paused: they still change photos, and the timer cannot move the show under them. The slide the
        # tap paused on is read from the answer: the show went on while the touchscreen was being set up.
        paused = paused_on(out)
        touch.send("swipe 0.8,0.5 0.2,0.5")
        record(shows(after(paused)), "touchscreen swipe left: next photo")
        touch.send("swipe 0.2,0.5 0.8,0.5")
        record(shows(paused), "touchscreen swipe right: previous photo")
        touch.send("swipe 0.8,0.5 0.2,0.5")
        record(shows(after(paused)), "touchscreen swipe left again: next photo")
        touch.send("swipe 0.5,0.8 0.5,0.2")
        record(shows(3), "touchscreen swipe up: next category")
        touch.send("swipe 0.5,0.2 0.5,0.8")
        record(shows(0), "touchscreen swipe down: previous category")
        touch.send("tap 0.5,0.5")
        ok, out = status_until(lambda out: '"user"' not in out)
        record(ok, f"touchscreen tap again: resumed ({out.strip()[:90]})")
        touch.send("long 0.5,0.5")
        deadline = time.monotonic() + 10
        while 'showing: "Test": 0' not in read(f"{share}/player.out") and time.monotonic() < deadline:
            time.sleep(0.1)
        touch_status, touch_output = touch.unplug()
        record(touch_status == 0, f"the touchscreen was unplugged ({touch_output.strip()[-80:]})")
        status_code, output = vm.stop("player")
        record(status_code == 0 and "input device: Vitrine test touchscreen" in output,
               "the player picked up the touchscreen plugged in later and exited 0")
        record('showing: "Test": 0' in output, "a long press shows the category and slide name")
        if not all(display.results):
            print("--- player log\n" + output[-3000:])


def main():
    args = vmlib.arguments(__doc__)
    ok, reason = vmlib.check()
    if not ok:
        return vmlib.skipped("VM input tests", reason)
    try:
        run(args.vitrine)
    except Exception as error:  # a hung guest fails the run, it does not hang it
        record(False, f"{type(error).__name__}: {error}")
    return display.summary()


if __name__ == "__main__":
    sys.exit(main())

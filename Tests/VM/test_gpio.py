#!/usr/bin/python3
"""Buttons and a motion sensor on a real kernel GPIO chip: gpio-sim (built out of tree for the test kernel by
build_gpio_sim.sh) in a QEMU guest, its lines named as Raspberry Pi OS names the header pins and driven through
each line's sysfs `pull`, as a button or a PIR sensor would drive a Pi's pin. The player sees them through
libgpiod 1.6 and the kernel's GPIO character device, as on a Pi. On virtio-gpu at 800x480:

- a button pressed (its line pulled low) shows the next photo; held for two seconds it switches category;
- the sensor idle for `offAfter` turns the screen off: DPMS Off, the screendump dark, `status` says absent;
- the sensor's line going active brings the picture back within one second (timed in the guest);
- a key press wakes the screen too;
- a button on a chip that does not exist and one on a line another program holds each give one log line, and
  the show goes on.

Prints `N passed, M failed`. Without QEMU, a kernel or the modules' sources it skips with the reason, except under
CI=true, where that is a failure.

Usage: test_gpio.py [--vitrine PATH]
"""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import test_display as display  # noqa: E402
import vm as vmlib  # noqa: E402
from test_input import make_library  # noqa: E402  (the Test photos and a one-photo Zeta category)

record = display.record
until = display.until
OFF_AFTER_MINUTES = 0.2
# Line offsets on the simulated chip and the names the Pi gives those header pins.
LINES = {"GPIO17": 0, "GPIO27": 1, "GPIO4": 2, "GPIO22": 3}
CHIP_SETUP = r"""
set -e
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
d=/sys/kernel/config/gpio-sim/frame
mkdir $d $d/bank0
echo 8 > $d/bank0/num_lines
echo frame-pins > $d/bank0/label
for line in %s; do
    mkdir $d/bank0/line${line%%=*}
    echo ${line#*=} > $d/bank0/line${line%%=*}/name
done
echo 1 > $d/live
cat $d/bank0/chip_name
""" % " ".join(f"{offset}={name}" for name, offset in LINES.items())


class Guest:
    def __init__(self, vm, vitrine, references):
        self.vm, self.vitrine, self.references = vm, vitrine, references

    def press(self, name, seconds):
        """Holds a button (wired to ground) down for `seconds`, timed in the guest."""
        rc, out = self.vm.run(f"f=$(echo /sys/devices/platform/gpio-sim.*/gpiochip*/sim_gpio{LINES[name]}/pull); "
                              f"echo pull-down > $f; sleep {seconds}; echo pull-up > $f")
        if rc != 0:
            raise RuntimeError(f"cannot press {name}: {out}")

    def pull(self, name, level):
        """Drives the line as the outside world would: pull-up (high) or pull-down (low)."""
        # A loop, not a redirection to the glob: dash does not expand globs in redirections.
        rc, out = self.vm.run(f"for f in /sys/devices/platform/gpio-sim.*/gpiochip*/sim_gpio{LINES[name]}/pull; "
                              f"do echo pull-{level} > $f; done")
        if rc != 0:
            raise RuntimeError(f"cannot pull {name} {level}: {out}")

    def status(self):
        rc, out = self.vm.run(f"{self.vitrine} ctl --control /tmp/vitrine.sock status")
        try:
            return json.loads(out) if rc == 0 else {}
        except ValueError:
            return {}

    def dpms(self):
        rc, out = self.vm.run("cat /sys/class/drm/card0-Virtual-1/dpms")
        return out.strip()

    def photo(self, dump):
        """The index of the photo the screendump shows whole, or None."""
        scores = [display.psnr(dump, r) for r in self.references]
        best = max(range(len(scores)), key=lambda i: scores[i])
        return best if scores[best] >= 35 else None

    def shows(self, index, timeout=20):
        dump, ok = display.wait_for(self.vm, lambda d: self.photo(d) == index, timeout)
        return ok, self.photo(dump)

    def dark(self, dump):
        gray = dump.convert("L")
        return sum(gray.getdata()) / (gray.width * gray.height) < 8 and self.photo(dump) is None

    def log(self):
        with open(f"{self.vm.share}/player.out", errors="replace") as f:
            return f.read()


def build_modules():
    built = subprocess.run([f"{HERE}/build_gpio_sim.sh"], capture_output=True, text=True)
    if built.returncode != 0:
        return None, built.stderr.strip()[-500:]
    return built.stdout.split(), None


def run(vitrine, modules):
    with vmlib.VM(device="virtio", width=800, height=480, inputs=True, preload=["configfs"], insmod=modules) as vm:
        share = vm.share
        make_library(share)
        names = [f"Test/{name}" for name, _, _ in display.PHOTOS] + ["Zeta/only.jpg"]
        references = [display.render(vitrine, f"{share}/lib/{name}", 800, 480, share) for name in names]
        g = Guest(vm, vitrine, references)
        rc, out = vm.run(CHIP_SETUP)
        record(rc == 0 and out.strip().startswith("gpiochip"),
               f"gpio-sim makes a chip with lines {', '.join(LINES)} ({out.strip()[-80:]})")
        rc, out = vm.run("/lib/systemd/systemd-udevd --daemon && udevadm trigger --action=add "
                         "--subsystem-match=input --subsystem-match=drm && udevadm settle -t 20", timeout=60)
        record(rc == 0, f"udevd runs in the guest ({out.strip()[-80:]})")
        # Someone is there while the buttons are tried (the sensor active); GPIO22 is held by another program, as
        # an overlay or a script would hold it.
        g.pull("GPIO4", "up")
        vm.spawn("holder", "exec gpiomon gpiochip0 %d" % LINES["GPIO22"])
        held, _ = until(lambda: ("GPIO22" in vm.run("gpioinfo gpiochip0 | grep -w used")[1], None), 20)
        record(held, "another program holds GPIO22")
        config = {
            "library": "/share/lib", "deviceTable": f"{REPO}/Config/devices.json", "interval": 600,
            "transition": "none", "order": "name", "pauseOnInput": 0, "controlSocket": "/tmp/vitrine.sock",
            "display": {"backend": "drm"},
            "gpio": {"longPressSeconds": 1, "buttons": [
                {"line": "GPIO17", "action": "next", "longPress": "nextCategory"},
                {"line": "GPIO22", "action": "pause"},
                {"chip": "pinctrl-rp1", "offset": 5, "action": "previous"}]},
            "presence": {"sensor": {"line": "GPIO4"}, "offAfter": OFF_AFTER_MINUTES},
        }
        with open(f"{share}/gpio.json", "w") as f:
            json.dump(config, f)
        vm.spawn("player", f"exec {vitrine} play --config /share/gpio.json")
        ok, shown = g.shows(0, 60)
        record(ok, f"the first photo is on screen (photo {shown})")

        g.press("GPIO17", 0.2)
        ok, shown = g.shows(1)
        record(ok, f"a press of the GPIO17 button shows the next photo (photo {shown})")

        g.press("GPIO17", 2)
        ok, shown = g.shows(3)
        state = g.status()
        record(ok and state.get("category") == "Zeta",
               f"a two-second press switches category (photo {shown}, category {state.get('category')})")

        # Nobody: the screen goes off once the sensor has been idle for offAfter, not before.
        off_after = OFF_AFTER_MINUTES * 60
        idle_since = time.monotonic()
        g.pull("GPIO4", "down")
        early = g.status()
        record(early.get("presence") == "present" and early.get("screen") == "on" and early.get("motion") is False,
               f"present and on as the sensor goes idle ({early.get('presence')}, screen {early.get('screen')}, "
               f"motion {early.get('motion')})")
        done, state = until(lambda: ((s := g.status()).get("presence") == "absent", s), off_after + 20)
        waited = time.monotonic() - idle_since
        record(done and off_after - 0.5 <= waited <= off_after + 5 and "absent" in state.get("paused", []),
               f"the sensor idle for offAfter ({off_after:.0f} s) makes the room absent after {waited:.1f} s "
               f"(paused {state.get('paused')})")
        dpms_off, dpms = until(lambda: ((d := g.dpms()) == "Off", d), 10)
        dark = g.dark(vm.screendump())
        record(dpms_off and dark and state.get("screen") == "off",
               f"an empty room turns the screen off (DPMS {dpms}, dark {dark}, screen {state.get('screen')})")

        # Motion: the player lights the screen within a second of the line going active, timed in the guest.
        rc, out = vm.run(
            "pull=$(echo /sys/devices/platform/gpio-sim.*/gpiochip*/sim_gpio%d/pull); "
            "start=$(date +%%s%%N); echo pull-up > $pull; "
            "while [ \"$(cat /sys/class/drm/card0-Virtual-1/dpms)\" != On ] && "
            "[ $(( $(date +%%s%%N) - start )) -lt 5000000000 ]; do :; done; "
            "echo $(( ($(date +%%s%%N) - start) / 1000000 ))" % LINES["GPIO4"], timeout=30)
        try:
            reaction = int(out.strip().splitlines()[-1]) / 1000
        except (ValueError, IndexError):
            reaction = None
        ok, shown = g.shows(3, 10)
        record(reaction is not None and reaction < 1.0 and ok,
               f"motion brings the picture back within a second (DPMS On after {reaction} s, photo {shown})")
        state = g.status()
        record(state.get("presence") == "present" and state.get("motion") is True,
               f"status says present, motion true ({state.get('presence')}, {state.get('motion')})")

        # The sensor goes idle; after offAfter the screen is off again, and a key brings it back.
        g.pull("GPIO4", "down")
        done, _ = until(lambda: (g.dpms() == "Off", None), off_after + 20)
        record(done, "the sensor idle again turns the screen off again")
        vm.key("a")
        done, dpms = until(lambda: ((d := g.dpms()) == "On", d), 10)
        ok, shown = g.shows(3, 10)
        record(done and ok, f"a key press wakes the screen (DPMS {dpms}, photo {shown})")

        log = g.log()
        busy = [line for line in log.splitlines() if "GPIO22" in line]
        missing = [line for line in log.splitlines() if "pinctrl-rp1" in line]
        record(len(busy) == 1 and "busy" in busy[0],
               f"the held line is one log line ({busy[:2]})")
        record(len(missing) == 1 and "No such file" in missing[0],
               f"the missing chip is one log line ({missing[:2]})")
        status, output = vm.stop("player")
        record(status == 0, f"SIGTERM ends vitrine with status 0 (got {status})")
        rc, out = vm.run("gpioinfo gpiochip0 | grep -E 'GPIO17|GPIO4'")
        record("unused" in out and "vitrine" not in out, f"the lines are free again after exit ({' '.join(out.split())})")
        if not all(display.results):
            print("--- player log\n" + output[-3000:])


def main():
    args = vmlib.arguments(__doc__)
    ok, reason = vmlib.check()
    if not ok:
        return vmlib.skipped("VM GPIO tests", reason)
    modules, problem = build_modules()
    if modules is None:
        return vmlib.skipped("VM GPIO tests", f"cannot build gpio-sim: {problem}")
    try:
        run(args.vitrine, modules)
    except Exception as error:  # a hung or crashed guest fails the run, with what it was doing
        record(False, f"{type(error).__name__}: {error}")
    return display.summary()


if __name__ == "__main__":
    sys.exit(main())

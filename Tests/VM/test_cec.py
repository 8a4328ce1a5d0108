#!/usr/bin/python3
"""HDMI-CEC on a real kernel CEC bus: vivid (`num_hdmi_outputs=1`) in a QEMU guest gives an HDMI input's adapter,
/dev/cec0, played as the TV with cec-ctl (v4l-utils), and an HDMI output's adapter, /dev/cec1, which the player
drives through the kernel's CEC API, on one emulated bus. What the TV receives is read from `cec-ctl --monitor`.
On virtio-gpu at 640x480:

- at start the TV gets Image View On and Active Source;
- the TV remote's keys change slides and pause the show;
- the TV announcing standby holds the show, and the TV on again releases it;
- another device taking the TV holds the show, and the TV choosing the player again releases it;
- `screen off` sends Standby, `screen on` Image View On and Active Source; so do the schedule's off and on edges
  (the guest's clock set just before them);
- a day-part of `playlists` (Zeta from 18:00 to 20:00) takes the screen at its boundary, at once when the clock is
  stepped into its span and out of it (the guest's `date -s`: the wall-clock timer is cancelled on a set);
- with powerOnTV and standbyTV false the TV is sent neither;
- an adapter that is not there is one log line, and the show goes on.

Prints `N passed, M failed`. Without QEMU or a kernel it skips with the reason, except under CI=true, where that is
a failure.

Usage: test_cec.py [--vitrine PATH]
"""
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import test_display as display  # noqa: E402
import test_gpio  # noqa: E402  (its Guest: status, photo matching)
import vm as vmlib  # noqa: E402
from test_input import make_library  # noqa: E402  (the Test photos and a one-photo Zeta category)

record = display.record
until = display.until
TV = "/dev/cec0"


class Guest(test_gpio.Guest):
    """The GPIO test's guest (status, which photo is on screen), with the TV on the CEC bus."""

    def tv(self, arguments):
        """The TV says something on the bus."""
        rc, out = self.vm.run(f"cec-ctl -d {TV} {arguments} >/dev/null 2>&1; echo $?")
        return out.strip() == "0"

    def remote(self, key):
        return self.tv(f"--to 4 --user-control-pressed ui-cmd={key}") and self.tv("--to 4 --user-control-released")

    def bus(self):
        with open(f"{self.vm.share}/bus.txt", errors="replace") as f:
            return f.read()

    def count(self, what):
        """How often the TV received `what` from the player: e.g. '(4 to 0): IMAGE_VIEW_ON'."""
        return self.bus().count(f"Received from Playback Device 1 to {what}")

    def ctl(self, command):
        rc, out = self.vm.run(f"{self.vitrine} ctl --control /tmp/vitrine.sock {command}")
        return out.strip()

    def output(self, name):
        with open(f"{self.vm.share}/{name}.out", errors="replace") as f:
            return f.read()


POWER_ON = ("TV (4 to 0): IMAGE_VIEW_ON", "all (4 to 15): ACTIVE_SOURCE")
STANDBY = "TV (4 to 0): STANDBY"


def write_config(share, name, cec, schedule=None, playlists=None):
    config = {
        "library": "/share/lib", "deviceTable": f"{REPO}/Config/devices.json", "interval": 600,
        "transition": "none", "order": "name", "pauseOnInput": 0, "controlSocket": "/tmp/vitrine.sock",
        "display": {"backend": "drm"}, "cec": cec,
    }
    if schedule:
        config["screenSchedule"] = schedule
    if playlists:
        config["playlists"] = playlists
    with open(f"{share}/{name}.json", "w") as f:
        json.dump(config, f)
    return f"/share/{name}.json"


def run(vitrine):
    with vmlib.VM(device="virtio", width=640, height=480) as vm:
        share = vm.share
        make_library(share)
        names = [f"Test/{name}" for name, _, _ in display.PHOTOS] + ["Zeta/only.jpg"]
        references = [display.render(vitrine, f"{share}/lib/{name}", 640, 480, share) for name in names]
        g = Guest(vm, vitrine, references)
        rc, out = vm.run("modprobe vivid num_hdmi_outputs=1 n_devs=1 && ls /dev/cec*", timeout=90)
        record(rc == 0 and "/dev/cec1" in out, f"vivid gives a TV's and a player's CEC adapter ({' '.join(out.split())})")
        record(g.tv("--tv --osd-name TV"), "cec-ctl makes /dev/cec0 the TV (logical address 0)")
        vm.spawn("monitor", f"exec cec-ctl -d {TV} --monitor > /share/bus.txt 2>&1")
        until(lambda: ("Initial Event" in g.bus(), None), 20)

        # The player's clock is the guest's; the schedule sleeps from 03:00 to 04:00, which the test reaches by
        # setting the clock.
        today = vm.run("date +%F")[1].strip()
        vm.run(f"date -s '{today} 12:00:00'")
        config = write_config(share, "cec", {"adapter": "/dev/cec1", "osdName": "Frame"},
                              {"off": "03:00", "on": "04:00"},
                              [{"name": "Evening", "categories": "Zeta", "from": "18:00", "to": "20:00"}])
        vm.spawn("player", f"exec {vitrine} play --config {config}")
        ok, shown = g.shows(0, 60)
        record(ok, f"the first photo is on screen (photo {shown})")
        done, _ = until(lambda: (all(g.count(what) >= 1 for what in POWER_ON), None), 20)
        powered = time.monotonic()
        record(done and g.count(POWER_ON[0]) == 1,
               f"at start the TV receives Image View On (once: {g.count(POWER_ON[0])}) and Active Source 1.0.0.0")
        rc, out = vm.run(f"cec-ctl -d {TV} --to 4 --give-osd-name 2>&1")
        record("Frame" in out, f"the player answers Give OSD Name with its name ({' '.join(out.split())[-60:]})")

        record(g.remote("right"), "the TV remote's Right key goes over the bus")
        ok, shown = g.shows(1)
        record(ok, f"the remote's Right key shows the next photo (photo {shown})")
        g.remote("pause")
        paused, state = until(lambda: ("user" in (s := g.status()).get("paused", []), s), 10)
        record(paused, f"the remote's Pause key pauses the show ({state.get('paused')})")
        g.remote("pause")
        until(lambda: ("user" not in g.status().get("paused", []), None), 10)

        # Standby reports right after Image View On are the TV booting; the owner switching it off comes later. The
        # TV says standby until the player takes it as the owner's (no fixed wait for its boot window to pass).
        def switched_off():
            g.tv("--to 15 --standby")
            state = g.status()
            return "tvOff" in state.get("paused", []), state
        held, state = until(switched_off, 40)
        record(held and time.monotonic() - powered >= 12,
               f"a standby report in the TV's first seconds after Image View On is its boot, not its owner: held "
               f"after {time.monotonic() - powered:.0f} s")
        record(held and state.get("cec", {}).get("tv") == "standby",
               f"the TV switched off by its owner holds the show (paused {state.get('paused')}, cec {state.get('cec')})")
        g.tv("--to 4 --report-power-status pwr-state=on")
        released, state = until(lambda: ("tvOff" not in (s := g.status()).get("paused", []), s), 10)
        record(released, f"the TV on again releases it (paused {state.get('paused')})")

        sources = g.count(POWER_ON[1])
        g.tv("--to 15 --active-source phys-addr=2.0.0.0")
        held, state = until(lambda: ("otherSource" in (s := g.status()).get("paused", []), s), 10)
        record(held, f"another device taking the TV holds the show (paused {state.get('paused')})")
        g.tv("--to 15 --set-stream-path phys-addr=1.0.0.0")
        released, state = until(lambda: ("otherSource" not in (s := g.status()).get("paused", []), s), 10)
        answered, _ = until(lambda: (g.count(POWER_ON[1]) > sources, None), 10)
        record(released and answered,
               f"the TV choosing the player again releases it, and the player says Active Source "
               f"(paused {state.get('paused')})")

        record(g.ctl("screen off") == "ok", "`screen off` is taken")
        done, _ = until(lambda: (g.count(STANDBY) == 1, None), 10)
        record(done, "`screen off` sends the TV Standby")
        before = [g.count(what) for what in POWER_ON]
        g.ctl("screen on")
        done, _ = until(lambda: (all(g.count(w) > n for w, n in zip(POWER_ON, before)), None), 10)
        record(done, "`screen on` sends Image View On and Active Source")

        vm.run(f"date -s '{today} 02:59:57'")
        done, _ = until(lambda: (g.count(STANDBY) == 2, None), 15)
        state = g.status()
        record(done and state.get("screen") == "off",
               f"the schedule's off edge sends Standby (screen {state.get('screen')})")
        before = [g.count(what) for what in POWER_ON]
        vm.run(f"date -s '{today} 03:59:57'")
        done, _ = until(lambda: (all(g.count(w) > n for w, n in zip(POWER_ON, before)), None), 15)
        record(done, "the schedule's on edge sends Image View On and Active Source")

        # Day-parts: the boundary as the clock reaches it, then the clock stepped into and out of the span.
        zeta = len(display.PHOTOS)
        vm.run(f"date -s '{today} 17:59:58'")
        state = g.status()
        before = state.get("playlist")
        ok, shown = g.shows(zeta, 10)
        state = g.status()
        record(before is None and ok and (state.get("playlist") or {}).get("name") == "Evening",
               f"at 18:00 the day-part Evening takes the screen (playlist {before} -> {state.get('playlist')}, "
               f"photo {shown})")
        vm.run(f"date -s '{today} 20:00:30'")
        left, state = until(lambda: ((s := g.status()).get("playlist") is None, s), 5)
        record(left, f"the clock stepped past 20:00: no playlist in force at once ({state.get('playlist')})")
        vm.run(f"date -s '{today} 18:30:00'")
        back, state = until(lambda: (((s := g.status()).get("playlist") or {}).get("name") == "Evening", s), 5)
        record(back and state.get("category") == "Zeta",
               f"the clock stepped back into 18:00-20:00: Evening at once ({state.get('playlist')}, category "
               f"{state.get('category')})")
        vm.run(f"date -s '{today} 12:00:00'")
        status, output = vm.stop("player")
        record(status == 0, f"SIGTERM ends vitrine with status 0 (got {status})")

        # vitrine probe asks the TV, played now by cec-follower, which answers Give Device Power Status.
        vm.spawn("follower", f"exec cec-follower -d {TV}")

        def probed():
            rc, out = vm.run(f"{vitrine} probe", timeout=60)
            line = next((l for l in out.splitlines() if l.startswith("/dev/cec1:")), "")
            return rc == 0 and ("TV on" in line or "TV standby" in line), line
        answered, line = until(probed, 30)
        vm.stop("follower")
        record(answered and "vivid-000-vid-out0" in line and "physical address 1.0.0.0" in line,
               f"vitrine probe lists the adapter, its address and the TV's power: {line}")

        # A home that shares the TV: the player leaves it alone.
        vm.run(f"date -s '{today} 12:00:00'")
        config = write_config(share, "shared", {"adapter": "/dev/cec1", "powerOnTV": False, "standbyTV": False})
        sent = (g.count(POWER_ON[0]), g.count(STANDBY))
        vm.spawn("shared", f"exec {vitrine} play --config {config}")
        ok, _ = g.shows(0, 60)
        # First the proof that CEC runs here (else "nothing arrived" proves nothing): the player is on the bus
        # and answers the TV.
        running, state = until(lambda: (((s := g.status()).get("cec") or {}).get("address") == "1.0.0.0", s), 20)
        rc, out = vm.run(f"cec-ctl -d {TV} --to 4 --give-osd-name 2>&1")
        record(running and rc == 0 and "Vitrine" in out,
               f"sharing the TV, the player is on the bus and answers it with its name (cec {state.get('cec')}; "
               f"{' '.join(out.split())[-60:]})")
        g.ctl("screen off")
        until(lambda: (g.status().get("screen") == "off", None), 10)
        g.ctl("screen on")
        until(lambda: (g.status().get("screen") == "on", None), 10)
        # Nothing must arrive. No fixed wait: the TV asks the player for its name and gets the answer, and the
        # bus is in order, so whatever the player sent for screen off and on is in the TV's log by then.
        rc, out = vm.run(f"cec-ctl -d {TV} --to 4 --give-osd-name 2>&1")
        record(ok and rc == 0 and (g.count(POWER_ON[0]), g.count(STANDBY)) == sent,
               f"with powerOnTV and standbyTV false the TV gets neither (sent before {sent}, after "
               f"{(g.count(POWER_ON[0]), g.count(STANDBY))})")
        vm.stop("shared")

        config = write_config(share, "missing", {"adapter": "/dev/cec7"})
        vm.spawn("missing", f"exec {vitrine} play --config {config}")
        ok, shown = g.shows(0, 60)
        vm.stop("missing")
        lines = [line for line in g.output("missing").splitlines() if "/dev/cec7" in line]
        record(ok and len(lines) == 1,
               f"a missing adapter is one log line and the show plays (photo {shown}): {lines}")
        if not all(display.results):
            print("--- bus\n" + g.bus()[-3000:])
            print("--- player log\n" + output[-3000:])


def main():
    args = vmlib.arguments(__doc__)
    ok, reason = vmlib.check()
    if not ok:
        return vmlib.skipped("VM CEC tests", reason)
    try:
        run(args.vitrine)
    except Exception as error:  # a hung or crashed guest fails the run, with what it was doing
        record(False, f"{type(error).__name__}: {error}")
    return display.summary()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""A clip's pictures on a plane that converts Y'CbCr itself, as vc4's planes do on a Raspberry Pi: vkms on Debian's
newest kernel (newer_kernel.sh unpacks it and builds vkms; Debian 12's 6.1, which the other VM tests boot, has no
Y'CbCr plane anywhere), in a QEMU guest, at 640x480:

- `vitrine probe --json` lists the card's planes as libdrm's modetest does (ids, types, formats), and names the
  primary plane for the Virtual connector's clips, as NV12;
- a 4 s 640x360 30 fps H.264 clip of flat white and black pictures (limited range, as phones write), shown
  between a white and a black photo with cuts: the log says NV12 on the primary plane; the kernel's own atomic
  state (debugfs) shows the primary plane scanning out an NV12 framebuffer while it plays and XR24 after; at
  least 114 of its 120 pictures reach the glass (the player's flip completions);
- on its next round, vkms's CRC of each vblank's composed output, computed by the kernel from what the planes put
  out: through the photos and the clip only the white and the black photos' two values come, changing with the
  clip's pictures (so the plane was told the clip's range and matrix: limited white is 255, not 235 grey);
- the clip ends and the next photo follows.

Prints `N passed, M failed`. Without QEMU, the newer kernel or its vkms it skips with the reason, except under
CI=true, where that is a failure.

Usage: test_planes.py [--vitrine PATH]
"""
import json
from collections import Counter
import os
import re
import subprocess
import sys
import time

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import test_display as display  # noqa: E402
import vm as vmlib  # noqa: E402

record = display.record
CLOCK = re.compile(r"stats: clip \S+ clock: clip time 0 at ([0-9.]+)")
FORMAT = re.compile(r"format=\S+")
ENDED = re.compile(r"clip (\S+) ended: (\d+) pictures shown, (\d+) dropped, (\d+) late")
# A reader of vkms's CRC file that stamps each line with the guest's monotonic clock (the player's clock too).
CRC_READER = """
import sys, time
with open("/sys/kernel/debug/dri/0/crtc-0/crc/data") as source, open(sys.argv[1], "w", buffering=1) as out:
    for line in source:
        out.write(f"{time.monotonic():.4f} {line.strip()}\\n")
"""


def planes_from_modetest(text):
    """{id: [type, formats]} from `modetest -p`'s Planes section (a plane's row, its formats line, and the value
    under its `type` property)."""
    planes, current, in_type = {}, None, False
    for line in text.split("Planes:", 1)[-1].splitlines():
        row = re.match(r"^(\d+)\s", line)
        if row:
            current, in_type = int(row.group(1)), False
            planes[current] = [None, []]
        elif current is None:
            continue
        elif line.strip().startswith("formats:"):
            planes[current][1] = line.split(":", 1)[1].split()
        elif re.match(r"^\s+\d+ type:$", line):
            in_type = True
        elif in_type and line.strip().startswith("value:"):
            planes[current][0] = {"0": "overlay", "1": "primary", "2": "cursor"}.get(line.split()[-1])
            in_type = False
    return planes


def make_library(share):
    folder = f"{share}/lib/Planes"
    os.makedirs(folder)
    Image.new("RGB", (1280, 720), (255, 255, 255)).save(f"{folder}/1-white.png")
    Image.new("RGB", (1280, 720), (0, 0, 0)).save(f"{folder}/2-black.png")
    # Flat white and black pictures, ten of each in turn (a change every third of a second at 30 fps), in the
    # limited range phones write, lossless so the decoder gives back exactly Y' 235 and 16; the box's own size, so
    # the guest's CPUs go to vkms's CRCs rather than to decoding and scaling.
    frames = b"".join((b"\xff" if (i // 10) % 2 == 0 else b"\x00") * (640 * 360 * 3) for i in range(120))
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "640x360",
                    "-r", "30", "-i", "-", "-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p", "-color_range", "tv",
                    "-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709",
                    f"{folder}/3-clip.mp4"], input=frames, check=True)
    Image.new("RGB", (1280, 720), (255, 255, 255)).save(f"{folder}/4-white.png")


def run(vitrine):
    with vmlib.VM(device="none", preload=["vkms"], cpus=2, newer=True) as vm:
        share = vm.share
        rc, out = vm.run("uname -r; ls /sys/class/drm")
        record("card0-Virtual-1" in out, f"vkms on the newer kernel drives card0 ({' '.join(out.split())[:90]})")

        rc, probe = vm.run(f"{vitrine} probe --json", timeout=120)
        rc2, modetest = vm.run("modetest -M vkms -p", timeout=120)
        cards = json.loads(probe).get("cards", []) if rc == 0 else []
        card = next((c for c in cards if c.get("driver") == "vkms"), {})
        seen = {p["id"]: [p["type"], p["formats"]] for p in card.get("planes", [])}
        oracle = planes_from_modetest(modetest) if rc2 == 0 else {}
        record(seen and seen == oracle,
               f"`vitrine probe` lists the planes as modetest does ({len(seen)} planes; probe {dict(list(seen.items())[:1])}"
               f", modetest {dict(list(oracle.items())[:1])})")
        primary = next((pid for pid, (kind, _) in seen.items() if kind == "primary"), None)
        virtual = next((c for c in card.get("connectors", []) if c.get("name") == "Virtual-1"), {})
        chosen = virtual.get("clipPlanes") or {}
        record(primary and chosen.get("plane") == primary and chosen.get("format") == "NV12",
               f"probe names the primary plane ({primary}) for clips, as NV12 ({chosen})")

        make_library(share)
        with open(f"{share}/planes.json", "w") as f:
            json.dump({"library": "/share/lib", "deviceTable": f"{REPO}/Config/devices.json", "interval": 1.5,
                       "order": "name", "transition": "none", "controlSocket": "/tmp/planes.sock",
                       "display": {"backend": "drm", "mode": "640x480"}}, f)
        with open(f"{share}/crc.py", "w") as f:
            f.write(CRC_READER)
        vm.run("mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug")
        vm.spawn("player", f"exec {vitrine} play --config /share/planes.json --stats")
        log = f"{share}/player.out"

        def text():
            with open(log, errors="replace") as f:
                return f.read()

        def until(condition, seconds):
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                value = condition()
                if value:
                    return value
                time.sleep(0.1)
            return condition()

        # Round one, measured with nothing else at work: the kernel's state of the primary plane, read until NV12
        # shows, and the player's own count of the pictures that reached the glass.
        until(lambda: "playing Planes/3-clip" in text(), 60)
        plane_state = ""

        def nv12_on_screen():
            nonlocal plane_state
            rc, state = vm.run("cat /sys/kernel/debug/dri/0/state")
            block = re.search(rf"plane\[{primary}\].*?(?=\nplane\[|\ncrtc\[|\Z)", state, re.S)
            plane_state = block.group(0) if block else state[:400]
            return "NV12" in plane_state
        playing_nv12 = until(nv12_on_screen, 4)
        formats = " ".join(FORMAT.findall(plane_state)) or plane_state[:200]
        record(playing_nv12, f"the kernel's atomic state shows the primary plane scanning out NV12 while the clip "
               f"plays ({formats})")
        ended = until(lambda: ENDED.search(text()), 30)
        shown, dropped = (int(ended.group(2)), int(ended.group(3))) if ended else (0, 0)
        record(ended and shown >= 114,
               f"{shown} of its 120 pictures reached the glass ({dropped} dropped; the player's flip completions)")
        after = until(lambda: "stats: slide Planes/4-white" in text(), 10)
        time.sleep(0.3)
        vm.run("cat /sys/kernel/debug/dri/0/state > /tmp/after.txt")
        rc, state = vm.run(f"sed -n '/plane\\[{primary}\\]/,/crtc\\[/p' /tmp/after.txt")
        record(after and "XR24" in state,
               f"the photo after the clip follows, the plane back on an XR24 framebuffer "
               f"({' '.join(FORMAT.findall(state))})")

        # Round two, with vkms composing every vblank for its CRC (which takes most of the guest: fewer pictures
        # make it, which is not what is measured here): the photos' CRCs, then the clip's.
        vm.run("echo auto > /sys/kernel/debug/dri/0/crtc-0/crc/control")
        vm.spawn("crc", "exec /usr/bin/python3 /share/crc.py /tmp/crc.txt")
        until(lambda: len(ENDED.findall(text())) >= 2, 60)
        # The next photo on screen, and the reader (which lags the vblanks under this load) past the moment it came.
        until(lambda: text().count("stats: slide Planes/4-white") >= 2, 10)
        shown_at = [float(m) for m in re.findall(r"stats: slide Planes/4-white .* at ([0-9.]+)", text())]

        def reader_caught_up():
            rc, last = vm.run("tail -n 1 /tmp/crc.txt")
            stamp = last.split()[0] if rc == 0 and last.split() else ""
            return len(shown_at) >= 2 and stamp.replace(".", "", 1).isdigit() and float(stamp) >= shown_at[1] + 0.2
        until(reader_caught_up, 10)
        vm.stop("crc")
        rc, out = vm.stop("player")
        vm.run("cp /tmp/crc.txt /share/crc.txt")
        record(rc == 0 and "shown as NV12 on the primary plane" in out and "clips go to primary plane" in out,
               "the log says the clip is shown as NV12 on the primary plane (exit %d)" % rc)
        crcs = []
        if os.path.exists(f"{share}/crc.txt"):
            with open(f"{share}/crc.txt") as f:
                for line in f:
                    parts = line.split()
                    if len(parts) == 3:
                        crcs.append((float(parts[0]), parts[2]))
        # Read in order, not by time: under the CRCs' load the reader lags the vblanks. From the white photos on,
        # the photos and the poster (drawn in RGB) give white, black, white; the clip's first pictures are white,
        # so a third change is a black picture of the clip's, and a picture the plane turned into the wrong colours
        # (limited white as 235 grey, say) would be a third value.
        values = [value for _, value in crcs]
        changes = sum(1 for a, b in zip(values, values[1:]) if a != b)
        record(len(set(values)) == 2 and changes >= 3,
               f"vkms's CRCs through the photos and the clip take only the white and the black photos' two values "
               f"({dict(Counter(values))} over {len(values)} vblanks), changing {changes} times (the photos and the "
               f"poster give 2: a third is a black picture of the clip's)")
        if not all(display.results):
            print(out[:1500] + "\n...\n" + out[-1500:])


def main():
    args = vmlib.arguments(__doc__)
    ok, reason = vmlib.check()
    if ok:
        try:
            vmlib.newer_kernel()
        except RuntimeError as error:
            ok, reason = False, str(error)
    if not ok:
        return vmlib.skipped("VM plane test", reason)
    try:
        run(args.vitrine)
    except Exception as error:  # a hung guest fails the run, it does not hang it
        record(False, f"{type(error).__name__}: {error}")
    return display.summary()


if __name__ == "__main__":
    sys.exit(main())

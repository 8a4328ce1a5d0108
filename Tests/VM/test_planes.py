#!/usr/bin/python3
"""A clip's pictures on a plane that converts Y'CbCr itself, as vc4's planes do on a Raspberry Pi: vkms on Debian's
newest kernel (newer_kernel.sh unpacks it and builds vkms; Debian 12's 6.1, which the other VM tests boot, has no
Y'CbCr plane anywhere), in a QEMU guest, at 640x480:

- `vitrine probe --json` lists the card's planes as libdrm's modetest does (ids, types, formats), and names the
  primary plane for the Virtual connector's clips, as NV12, and an overlay plane taking ARGB for text over them;
- a 4 s 640x360 30 fps H.264 clip of flat white and black pictures (limited range, as phones write), shown
  between a white and a black photo with cuts: the log says NV12 on the primary plane; the kernel's own atomic
  state (debugfs) shows the primary plane scanning out an NV12 framebuffer while it plays and XR24 after; at
  least 114 of its 120 pictures reach the glass (the player's flip completions);
- on its next round, vkms's CRC of each vblank's composed output, computed by the kernel from what the planes put
  out: through the photos and the clip only the white and the black photos' two values come, changing with the
  clip's pictures (so the plane was told the clip's range and matrix: limited white is 255, not 235 grey);
- the clip ends and the next photo follows;
- round three, with the clock on, over the clip alone in its category (a signage loop): the clip stays NV12 on the
  primary plane and the clock goes on an overlay plane above it as ARGB (vkms's `enable_overlay`), on in every
  state sampled, at one place in the top right; the two planes' buffers, read through the kernel (GETFB2, then
  mapped) and laid over each other by the test's own arithmetic, show the guest's time as Pillow reads it.

Prints `N passed, M failed`. Without QEMU, the newer kernel or its vkms it skips with the reason, except under
CI=true, where that is a failure.

Usage: test_planes.py [--vitrine PATH]
"""
import json
from collections import Counter
import os
import re
import shutil
import subprocess
import sys
import time

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import test_display as display  # noqa: E402
import vm as vmlib  # noqa: E402
import harness  # noqa: E402  (Tests/harness.py)

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
# A reader of what a plane scans out, as a screendump would: the plane's framebuffer (GETPLANE, GETFB2, which gives
# root a handle of its own to the buffer), mapped through that handle (MAP_DUMB) and written out raw with its
# format, pitches and offsets. The kernel's ioctls, not the player's code.
PLANE_READER = """
import fcntl, json, mmap, os, struct, sys

def iowr(nr, size):
    return (3 << 30) | (size << 16) | (ord("d") << 8) | nr

card = os.open(os.environ.get("CARD", "/dev/dri/card0"), os.O_RDWR)
fcntl.ioctl(card, (1 << 30) | (16 << 16) | (ord("d") << 8) | 0x0D, struct.pack("QQ", 2, 1))  # universal planes
out = {}
for plane in map(int, sys.argv[2:]):
    got = bytearray(struct.pack("6IQ", plane, 0, 0, 0, 0, 0, 0))
    fcntl.ioctl(card, iowr(0xB6, 32), got)
    fb = struct.unpack_from("6I", got)[2]
    if fb == 0:
        out[plane] = {"fb": 0}
        continue
    cmd = bytearray(104)
    struct.pack_into("I", cmd, 0, fb)
    fcntl.ioctl(card, iowr(0xCE, 104), cmd)
    width, height, fourcc = struct.unpack_from("3I", cmd, 4)
    handles, pitches, offsets = (list(struct.unpack_from("4I", cmd, 20 + 16 * i)) for i in range(3))
    rows = height * 3 // 2 if fourcc == 0x3231564E else height
    size = pitches[0] * rows
    request = bytearray(struct.pack("IIQ", handles[0], 0, 0))
    fcntl.ioctl(card, iowr(0xB3, 16), request)
    offset = struct.unpack_from("Q", request, 8)[0]
    with mmap.mmap(card, size, mmap.MAP_SHARED, mmap.PROT_READ, offset=offset) as pixels:
        with open(f"{sys.argv[1]}/plane-{plane}.raw", "wb") as f:
            f.write(pixels[:size])
    for handle in set(h for h in handles if h):
        fcntl.ioctl(card, (1 << 30) | (8 << 16) | (ord("d") << 8) | 0x09, struct.pack("II", handle, 0))
    out[plane] = {"fb": fb, "width": width, "height": height, "format": struct.pack("I", fourcc).decode(),
                  "pitches": pitches, "offsets": offsets}
with open(f"{sys.argv[1]}/planes.json", "w") as f:
    json.dump(out, f)
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
    # The clip alone in a category: it plays again and again (a signage loop), long enough to look at it.
    os.makedirs(f"{share}/loop/Loop")
    shutil.copy(f"{folder}/3-clip.mp4", f"{share}/loop/Loop/clip.mp4")


def nv12_to_rgb(y, cb, cr):
    """BT.709, limited range: the test's own formula (what a plane told the clip's matrix and range does)."""
    y, cb, cr = (y - 16) * 255 / 219, (cb - 128) * 255 / 224, (cr - 128) * 255 / 224
    return tuple(max(0, min(255, round(v))) for v in (y + 1.5748 * cr, y - 0.1873 * cb - 0.4681 * cr, y + 1.8556 * cb))


def compose(folder, meta, primary, text, rect):
    """The screen as the planes make it, by the test's own arithmetic: the primary plane's NV12 picture in RGB,
    and over it the text plane's premultiplied ARGB at `rect` (x, y, width, height)."""
    low, high = meta[str(primary)], meta[str(text)]
    with open(f"{folder}/plane-{primary}.raw", "rb") as f:
        nv12 = f.read()
    with open(f"{folder}/plane-{text}.raw", "rb") as f:
        argb = f.read()
    width, height, pitch = low["width"], low["height"], low["pitches"][0]
    chroma, chroma_pitch = low["offsets"][1], low["pitches"][1]
    image = Image.new("RGB", (width, height))
    pixels = image.load()
    # The top-right quarter is enough: the clock is there.
    for y in range(height // 2):
        for x in range(width // 2, width):
            c = chroma + (y // 2) * chroma_pitch + (x // 2) * 2
            pixels[x, y] = nv12_to_rgb(nv12[y * pitch + x], nv12[c], nv12[c + 1])
    x0, y0, w, h = rect
    for y in range(h):
        for x in range(w):
            i = y * high["pitches"][0] + x * 4
            b, g, r, a = argb[i:i + 4]
            under = pixels[x0 + x, y0 + y]
            pixels[x0 + x, y0 + y] = tuple(min(255, c + (u * (255 - a) + 127) // 255) for c, u in zip((r, g, b), under))
    return image


def plane_block(state, plane):
    block = re.search(rf"plane\[{plane}\].*?(?=\nplane\[|\ncrtc\[|\Z)", state, re.S)
    return block.group(0) if block else ""


def run(vitrine):
    # vkms with its overlay planes, which carry the clock over a clip.
    with vmlib.VM(device="none", preload=["vkms"], cpus=2, newer=True, options=["vkms.enable_overlay=1"]) as vm:
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
        text_plane = chosen.get("textPlane")
        record(primary and chosen.get("plane") == primary and chosen.get("format") == "NV12"
               and seen.get(text_plane, [None])[0] == "overlay" and "AR24" in seen.get(text_plane, [None, []])[1],
               f"probe names the primary plane ({primary}) for clips, as NV12, and an overlay plane that takes ARGB "
               f"for the text over them ({chosen})")

        make_library(share)
        with open(f"{share}/planes.json", "w") as f:
            json.dump({"library": "/share/lib", "deviceTable": f"{REPO}/Config/devices.json", "interval": 1.5,
                       "order": "name", "transition": "none", "controlSocket": "/tmp/planes.sock",
                       "display": {"backend": "drm", "mode": "640x480"}}, f)
        with open(f"{share}/crc.py", "w") as f:
            f.write(CRC_READER)
        with open(f"{share}/planes.py", "w") as f:
            f.write(PLANE_READER)
        vm.run("mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug")
        vm.spawn("player", f"exec {vitrine} play --config /share/planes.json --stats")
        log = f"{share}/player.out"

        def text():
            with open(log, errors="replace") as f:
                return f.read()

        # Round one, measured with nothing else at work: the kernel's state of the primary plane, read until NV12
        # shows, and the player's own count of the pictures that reached the glass.
        harness.until(lambda: "playing Planes/3-clip" in text(), 60)
        plane_state = ""

        def nv12_on_screen():
            nonlocal plane_state
            rc, state = vm.run("cat /sys/kernel/debug/dri/0/state")
            block = re.search(rf"plane\[{primary}\].*?(?=\nplane\[|\ncrtc\[|\Z)", state, re.S)
            plane_state = block.group(0) if block else state[:400]
            return "NV12" in plane_state
        playing_nv12 = harness.until(nv12_on_screen, 4)
        formats = " ".join(FORMAT.findall(plane_state)) or plane_state[:200]
        record(playing_nv12, f"the kernel's atomic state shows the primary plane scanning out NV12 while the clip "
               f"plays ({formats})")
        ended = harness.until(lambda: ENDED.search(text()), 30)
        shown, dropped = (int(ended.group(2)), int(ended.group(3))) if ended else (0, 0)
        record(ended and shown >= 114,
               f"{shown} of its 120 pictures reached the glass ({dropped} dropped; the player's flip completions)")
        after = harness.until(lambda: "stats: slide Planes/4-white" in text(), 10)
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
        harness.until(lambda: len(ENDED.findall(text())) >= 2, 60)
        # The next photo on screen, and the reader (which lags the vblanks under this load) past the moment it came.
        harness.until(lambda: text().count("stats: slide Planes/4-white") >= 2, 10)
        shown_at = [float(m) for m in re.findall(r"stats: slide Planes/4-white .* at ([0-9.]+)", text())]

        def reader_caught_up():
            rc, last = vm.run("tail -n 1 /tmp/crc.txt")
            stamp = last.split()[0] if rc == 0 and last.split() else ""
            return len(shown_at) >= 2 and stamp.replace(".", "", 1).isdigit() and float(stamp) >= shown_at[1] + 0.2
        harness.until(reader_caught_up, 10)
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
        check_clock(vm, vitrine, primary, text_plane)


def check_clock(vm, vitrine, primary, text_plane):
    """Round three: the clock on, over the clip alone in its category (a signage loop). The clip stays NV12 on
    the primary plane and the clock goes on the overlay plane above it, in every state sampled; the planes' own
    buffers, read through the kernel and laid over each other by the test's arithmetic, show the guest's time
    as Pillow reads it."""
    share = vm.share
    with open(f"{share}/clock.json", "w") as f:
        json.dump({"library": "/share/loop", "deviceTable": f"{REPO}/Config/devices.json", "order": "name",
                   "transition": "none", "display": {"backend": "drm", "mode": "640x480"},
                   "overlay": {"clock": "HH:mm", "corner": "top-right"}}, f)
    vm.spawn("clock", f"exec {vitrine} play --config /share/clock.json --stats")

    def text():
        with open(f"{share}/clock.out", errors="replace") as f:
            return f.read()
    harness.until(lambda: "playing Loop/clip" in text(), 60)
    # The kernel's state, sampled while the clip plays: whenever the primary plane shows NV12, the text plane is on
    # with an ARGB framebuffer at the same place (the clock never blinks out with a picture).
    samples, bad, positions = 0, [], set()
    deadline = time.monotonic() + 20
    while samples < 8 and time.monotonic() < deadline:
        rc, state = vm.run("cat /sys/kernel/debug/dri/0/state")
        low, high = plane_block(state, primary), plane_block(state, text_plane)
        if "NV12" not in low:
            continue
        samples += 1
        position = re.search(r"crtc-pos=(\d+)x(\d+)\+(\d+)\+(\d+)", high)
        if "format=AR24" not in high or not position:
            bad.append(" ".join((FORMAT.findall(high) or ["off"]) + [high[:60]]))
        else:
            positions.add(tuple(int(v) for v in position.groups()))
    (w, h, x, y) = next(iter(positions)) if len(positions) == 1 else (0, 0, 0, 0)
    record(samples == 8 and not bad and len(positions) == 1 and x > 320 and x + w <= 640 and y + h < 240,
           f"in {samples} states sampled with the clip on the primary plane as NV12, plane {text_plane} above it "
           f"shows an ARGB framebuffer in the top right, always at the same place ({sorted(positions)}; {bad[:2]})")

    # The planes' buffers, read until the primary plane holds one of the clip's black pictures (the clock is light:
    # it reads on black).
    expected, image = set(), None
    for attempt in range(30):
        rc, before = vm.run("date +%H:%M")
        os.makedirs(f"{share}/dump", exist_ok=True)
        rc, out = vm.run(f"/usr/bin/python3 /share/planes.py /share/dump {primary} {text_plane}", timeout=60)
        rc2, after = vm.run("date +%H:%M")
        if rc != 0 or not os.path.exists(f"{share}/dump/planes.json"):
            continue
        with open(f"{share}/dump/planes.json") as f:
            meta = json.load(f)
        low, high = meta.get(str(primary), {}), meta.get(str(text_plane), {})
        if low.get("format") != "NV12" or high.get("format") != "AR24":
            continue
        with open(f"{share}/dump/plane-{primary}.raw", "rb") as f:
            middle = f.read()[(low["height"] // 2) * low["pitches"][0] + low["width"] // 2]
        if middle == 16:
            expected = {before.strip(), after.strip()}
            image = compose(f"{share}/dump", meta, primary, text_plane, (x, y, w, h))
            break
    matches, read, margin = harness.pillow_reads_clock(image, "") if image else (False, "nothing", 0)
    record(image is not None and read in expected,
           f"the planes' own buffers, laid over each other by the test, show the clock: Pillow reads {read} "
           f"(the guest's time {' or '.join(sorted(expected)) or '?'}; margin {margin:.2f}, attempt {attempt + 1})")
    if image is not None and read not in expected:
        image.save(f"{REPO}/.build/planes-clock.png")
    rc, out = vm.stop("clock")
    record(rc == 0 and "the corner's text goes to plane" in out and "shown as NV12 on the primary plane" in out,
           f"the log says the clip is NV12 with the clock on the plane above (exit {rc})")


def main_on_newer_kernel(doc, what, run):
    """A VM test file's main on newer_kernel.sh's kernel: skipped (a failure under CI=true) without QEMU or that
    kernel; `run(vitrine)` records the checks; a hung guest fails the run, it does not hang it."""
    args = vmlib.arguments(doc)
    ok, reason = vmlib.check()
    if ok:
        try:
            vmlib.newer_kernel()
        except RuntimeError as error:
            ok, reason = False, str(error)
    if not ok:
        return vmlib.skipped(what, reason)
    try:
        run(args.vitrine)
    except Exception as error:
        record(False, f"{type(error).__name__}: {error}")
    return display.summary()


if __name__ == "__main__":
    sys.exit(main_on_newer_kernel(__doc__, "VM plane test", run))

#!/usr/bin/python3
"""`vitrine renditions` on a copy of a photo folder (the shared test set: camera JPEGs, every EXIF orientation,
progressive, CMYK, and broken files):

1. killed with SIGKILL at several moments mid-run: no file under a rendition name (NAME@WxH.jpg) is partial;
2. run to the end: every rendition is a baseline JPEG of exactly the size in its name, upright, and matches
   Pillow's own downscale of the EXIF-transposed original (PSNR); the originals are byte-identical; broken files
   are reported by name;
3. run again: nothing is written;
4. `vitrine play` on headless panels of each profile's size reads the rendition for every photo that has one.

Prints one line per check and `N passed, M failed`. Usage: check_renditions.py --vitrine BIN PHOTO_DIR
"""
import argparse
import hashlib
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from PIL import Image, ImageChops, ImageOps, ImageStat

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import record, summary  # noqa: E402  (Tests/harness.py)

# Photos up to vitrine's sanity limit (1000 MP) get renditions, so the check opens them too, past Pillow's guard
# against decompression bombs (179 MP).
Image.MAX_IMAGE_PIXELS = 1_000_000_000

PROFILES = {"rpi-touch-display": (800, 480), "hdmi-1080p": (1920, 1080)}
RENDITION = re.compile(r"^(?P<stem>.+)@(?P<w>\d+)x(?P<h>\d+)\.jpg$")


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def renditions(folder):
    return sorted(name for name in os.listdir(folder) if RENDITION.match(name))


def whole(path):
    """A complete JPEG of the size in its name: Pillow refuses truncated data by default."""
    match = RENDITION.match(os.path.basename(path))
    try:
        with Image.open(path) as image:
            image.load()
            return image.size == (int(match["w"]), int(match["h"])) and image.format == "JPEG"
    except Exception:
        return False


def psnr(a, b):
    stat = ImageStat.Stat(ImageChops.difference(a, b).point(lambda v: v * v))
    mse = sum(stat.mean) / len(stat.mean)
    return 99.0 if mse == 0 else 10 * math.log10(255 * 255 / mse)


def run_renditions(vitrine, library, kill_after=None):
    command = [vitrine, "renditions", "--library", library, "--profiles", ",".join(PROFILES), "--jobs", "2",
               "--devices", DEVICES]
    if kill_after is None:
        done = subprocess.run(command, capture_output=True, text=True)
        return done.returncode, done.stdout, done.stderr
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(kill_after)
    process.send_signal(signal.SIGKILL)
    process.wait()
    return process.returncode, "", ""


def counts_of(output):
    match = re.search(r"renditions: (\d+) written, (\d+) up to date, (\d+) failed", output)
    return tuple(int(n) for n in match.groups()) if match else None


def main():
    global DEVICES
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vitrine", required=True)
    parser.add_argument("photos")
    args = parser.parse_args()
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    DEVICES = f"{repo}/Config/devices.json"
    vitrine = os.path.abspath(args.vitrine)
    work = tempfile.mkdtemp(prefix="vitrine-renditions-")
    try:
        library = f"{work}/library"
        os.makedirs(library)
        for name in sorted(os.listdir(args.photos)):
            if name.lower().endswith((".jpg", ".jpeg")) and not RENDITION.match(name):
                shutil.copy2(f"{args.photos}/{name}", f"{library}/{name}")
        originals = {name: digest(f"{library}/{name}") for name in os.listdir(library)}
        print(f"{len(originals)} photos copied from {args.photos}")

        # 1. Killed mid-run, at several moments, each run from scratch: every file under a real name is whole.
        for moment in (0.1, 0.25, 0.5, 0.8):
            for name in os.listdir(library):
                if RENDITION.match(name) or name.startswith("."):
                    os.unlink(f"{library}/{name}")
            status, _, _ = run_renditions(vitrine, library, kill_after=moment)
            names = renditions(library)
            partial = [name for name in names if not whole(f"{library}/{name}")]
            hidden = [name for name in os.listdir(library) if name.startswith(".")]
            record(status == -signal.SIGKILL and not partial,
                   f"killed after {moment} s: {len(names)} renditions so far, none partial "
                   f"({len(hidden)} hidden temporary files left; partial: {partial[:3]})")

        # 2. To the end.
        started = time.monotonic()
        status, out, err = run_renditions(vitrine, library)
        seconds = time.monotonic() - started
        counts = counts_of(out)
        failed_names = sorted(set(re.findall(r"^failed .*/([^/:]+): ", err, re.M)))
        record(counts is not None and status == (1 if counts[2] else 0),
               f"a full run ends with a summary and exit status {status}: {out.strip().splitlines()[-1:]} "
               f"in {seconds:.1f} s")
        broken = [name for name in failed_names if not name.startswith(("broken_", "giant_", "12bit_", "lossless_"))]
        record(counts is not None and counts[2] == len(failed_names) and not broken,
               f"only broken or unsupported photos fail, each named once ({len(failed_names)}: "
               f"{', '.join(failed_names[:4])}...; unexpected: {broken})")
        record({name: digest(f"{library}/{name}") for name in originals} == originals,
               "the originals are byte-identical")
        leftovers = [name for name in os.listdir(library) if name.startswith(".")]
        record(not leftovers, f"no temporary file is left after a full run ({leftovers[:3]})")

        checked, worst, worst_name, wrong = 0, 99.0, "", []
        for name in renditions(library):
            match = RENDITION.match(name)
            original = next((o for o in originals if os.path.splitext(o)[0] == match["stem"]), None)
            with Image.open(f"{library}/{name}") as image:
                if image.info.get("progressive") or image.info.get("progression") or image.mode != "RGB":
                    wrong.append(name)
                    continue
                if original is None:
                    continue
                try:
                    with Image.open(f"{library}/{original}") as source:
                        upright = ImageOps.exif_transpose(source).convert("RGB")
                        expected = upright.resize(image.size, Image.LANCZOS)
                except OSError as error:  # Pillow cannot read a few that Vitrine can; nothing to compare with
                    print(f"      (Pillow cannot read {original}: {error})")
                    continue
                score = psnr(image.convert("RGB"), expected)
                checked += 1
                if score < worst:
                    worst, worst_name = score, name
        record(checked > 20 and worst >= 28 and not wrong,
               f"{checked} renditions are baseline RGB and match Pillow's upright downscale of their original "
               f"(worst PSNR {worst:.1f} dB, {worst_name}; not baseline RGB: {wrong[:3]})")

        # 3. Again: nothing to write.
        before = {name: os.stat(f"{library}/{name}").st_mtime_ns for name in renditions(library)}
        status, out, _ = run_renditions(vitrine, library)
        counts2 = counts_of(out)
        after = {name: os.stat(f"{library}/{name}").st_mtime_ns for name in renditions(library)}
        record(counts2 is not None and counts2[0] == 0 and counts2[1] == len(before) and before == after,
               f"a second run writes nothing: {out.strip().splitlines()[-1:]}")

        # 4. The player reads them.
        shown = len(originals) - len(failed_names)
        for profile, (w, h) in PROFILES.items():
            frames = f"{work}/frames-{profile}"
            config = f"{work}/{profile}.json"
            with open(config, "w") as f:
                json.dump({"library": library, "deviceTable": DEVICES, "interval": 0.05, "transition": "none",
                           "controlSocket": f"{work}/{profile}.sock",
                           "display": {"backend": "headless", "headlessSize": f"{w}x{h}"}}, f)
            subprocess.run([vitrine, "play", "--config", config, "--snapshots", frames, "--exit-after", str(shown)],
                           capture_output=True, timeout=600)
            with open(f"{frames}/presented.jsonl") as f:
                files = [json.loads(line).get("file") for line in f if line.strip()]
            files = [os.path.basename(p) for p in files if p]
            expected_misses = []
            for name in files:
                if RENDITION.match(name):
                    continue
                # The original was read: right only if no rendition covers the box the photo fills on this panel.
                ours = [RENDITION.match(r) for r in renditions(library)
                        if RENDITION.match(r)["stem"] == os.path.splitext(name)[0]]
                with Image.open(f"{library}/{name}") as source:
                    ow, oh = source.size
                    if source.getexif().get(0x0112, 1) in (5, 6, 7, 8):
                        ow, oh = oh, ow
                scale = min(w / ow, h / oh)
                covering = [r[0] for r in ours if int(r["w"]) >= ow * scale - 0.5 and int(r["h"]) >= oh * scale - 0.5]
                if scale < 1 and covering:
                    expected_misses.append(f"{name} (covered by {covering[0]})")
            from_renditions = sum(1 for name in files if RENDITION.match(name))
            record(len(files) == shown and from_renditions > 20 and not expected_misses,
                   f"play on a headless {w}x{h} panel: {from_renditions} of {len(files)} slides read from renditions, "
                   f"the rest are no larger than the panel (originals read despite a rendition: {expected_misses[:3]}; "
                   f"{shown} expected, shown twice: {sorted({n for n in files if files.count(n) > 1})[:3]})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Soak: the release player on a headless panel at 20 slides a second for 10,000 slides, while this script
switches categories, asks for status over the control socket several times a second, and adds, replaces and
deletes photos. Samples the player's resident memory (VmRSS, VmHWM) and open descriptors once a second.

Passes when the peak RSS after warm-up (the first WARMUP slides) grows by at most 1 MiB to the end, the open
descriptors at the end are as many as after warm-up, every slide asked for was shown, and the player exits 0.
Prints the figures. Usage: soak.py --vitrine BIN [--slides N] [--panel WxH]
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

from PIL import Image, ImageDraw

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "Tests"))
from harness import ctl  # noqa: E402  (Tests/harness.py)
CATEGORIES = ["Alps", "Beach", "City"]


def photo(path, seed, size=(1600, 1200)):
    rng = random.Random(seed)
    image = Image.new("RGB", size, tuple(rng.randrange(256) for _ in range(3)))
    draw = ImageDraw.Draw(image)
    for _ in range(12):
        x, y = rng.randrange(size[0]), rng.randrange(size[1])
        draw.rectangle([x, y, x + rng.randrange(50, 600), y + rng.randrange(50, 400)],
                       fill=tuple(rng.randrange(256) for _ in range(3)))
    temporary = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".part")
    image.save(temporary, "JPEG", quality=85)
    os.rename(temporary, path)  # as a sync tool does: the player only ever sees whole files


def status(sock_path):
    return json.loads(ctl(sock_path, "status", timeout=10))


def command(sock_path, line):
    return ctl(sock_path, line, timeout=10)


def proc_status(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0])  # kB
    fields["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    return fields


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vitrine", default=f"{REPO}/.build/release/vitrine")
    parser.add_argument("--slides", type=int, default=10000)
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--panel", default="800x480")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="vitrine-soak-")
    try:
        library = f"{work}/library"
        for c, category in enumerate(CATEGORIES):
            os.makedirs(f"{library}/{category}")
            for i in range(10):
                photo(f"{library}/{category}/p{i:02d}.jpg", c * 100 + i)
        sock = f"{work}/control.sock"
        with open(f"{work}/vitrine.json", "w") as f:
            json.dump({"library": library, "deviceTable": f"{REPO}/Config/devices.json", "interval": 0.05,
                       "transition": "none", "controlSocket": sock, "pauseOnInput": 0,
                       "display": {"backend": "headless", "headlessSize": args.panel}}, f)
        log = open(f"{work}/play.log", "w")
        player = subprocess.Popen([args.vitrine, "play", "--config", f"{work}/vitrine.json",
                                   "--exit-after", str(args.slides)], stdout=log, stderr=subprocess.STDOUT)
        while not os.path.exists(sock):
            time.sleep(0.05)
        started = time.monotonic()
        samples = []
        rng = random.Random(7)
        tick = 0
        warm = None
        added = 0
        while player.poll() is None:
            tick += 1
            try:
                state = status(sock)
                for _ in range(4):
                    status(sock)
                if tick % 3 == 0:
                    command(sock, "category next")
                if tick % 7 == 0:
                    command(sock, f"category {rng.choice(CATEGORIES)}")
            except (OSError, ValueError):
                if player.poll() is not None:
                    break
                raise
            # Photos come and go in every category, the shown one included.
            category = rng.choice(CATEGORIES)
            if tick % 2 == 0:
                photo(f"{library}/{category}/new{added:04d}.jpg", 10000 + added)
                added += 1
            if tick % 3 == 0:
                photo(f"{library}/{category}/p{rng.randrange(10):02d}.jpg", rng.randrange(1 << 30))
            if tick % 4 == 0:
                names = sorted(n for n in os.listdir(f"{library}/{category}") if n.startswith("new"))
                if len(names) > 3:
                    os.unlink(f"{library}/{category}/{names[0]}")
            try:
                figures = proc_status(player.pid)
            except FileNotFoundError:
                break
            figures.update(t=time.monotonic() - started, presented=state["presented"])
            samples.append(figures)
            if warm is None and state["presented"] >= args.warmup:
                warm = figures
            if tick % 30 == 0:
                print(f"  {figures['t']:6.0f} s  {figures['presented']:6d} slides  RSS {figures['VmRSS'] / 1024:.1f} MiB"
                      f"  peak {figures['VmHWM'] / 1024:.1f} MiB  fds {figures['fds']}", flush=True)
            time.sleep(max(0.0, 1.0 - (time.monotonic() - started - figures["t"])))
        status_code = player.wait(timeout=60)
        elapsed = time.monotonic() - started
        last = samples[-1] if samples else None
        with open(f"{work}/play.log", errors="replace") as f:
            output = f.read()
        shown = int(output.rsplit("presented ", 1)[-1].split()[0]) if "presented " in output else 0
        if warm is None or last is None:
            print(f"FAIL  the soak did not get past warm-up (status {status_code})\n{output[-2000:]}")
            return 1
        # The kernel updates VmHWM lazily (at unmaps), so the peak is the larger of it and every VmRSS sampled.
        def peak(window):
            return max(max(s["VmHWM"], s["VmRSS"]) for s in window) / 1024
        warm_index = samples.index(warm)
        peak_warm = peak(samples[:warm_index + 1])
        peak_end = peak(samples)
        drift = peak_end - peak_warm
        fds_after = [s["fds"] for s in samples if s["presented"] >= args.warmup]
        # A photo being decoded (its descriptor and libjpeg's copy) or a control client being served is an open
        # descriptor for a moment: a leak shows as a floor that rises, so compare the floors.
        fds_start = min(fds_after[:30])
        fds_end = min(fds_after[-30:])
        rate = shown / elapsed
        print(f"slides: {shown} in {elapsed:.0f} s ({rate:.1f} a second), {added} photos added, categories "
              f"switched about {2 * tick // 3} times, {5 * tick} status requests")
        print(f"peak RSS after warm-up ({args.warmup} slides): {peak_warm:.2f} MiB; at the end: "
              f"{peak_end:.2f} MiB; drift {drift:+.2f} MiB (allowed 1.00)")
        print(f"RSS after warm-up {warm['VmRSS'] / 1024:.2f} MiB, at the last sample {last['VmRSS'] / 1024:.2f} MiB")
        print(f"open descriptors: at least {fds_start} after warm-up and {fds_end} at the end "
              f"(range {min(fds_after)}..{max(fds_after)}; {sorted(set(fds_after))} seen)")
        checks = [
            (status_code == 0 and shown == args.slides, f"the player showed {shown} of {args.slides} slides and "
                                                        f"exited {status_code}"),
            (drift <= 1.0, f"peak RSS drift after warm-up {drift:+.2f} MiB <= 1 MiB"),
            (fds_start == fds_end and max(fds_after) <= fds_start + 4,
             f"open descriptors flat ({fds_start} -> {fds_end})"),
            (rate >= 15, f"about 20 slides a second ({rate:.1f})"),
        ]
        for ok, what in checks:
            print(("PASS  " if ok else "FAIL  ") + what)
        if not all(ok for ok, _ in checks):
            print(output[-3000:])
            return 1
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Large libraries: `vitrine play` on a headless 800x480 panel with one category of 1,000, 10,000 and 100,000
photos (hard links to the photos given), against a one-photo library measured in the same run.

For each size and order (name, newest): the time from start to the first picture on the "glass" (`--exit-after
1`: the process ends when the first slide is presented) and the peak RSS, cold (no header cache) and, for `newest`,
warm (the header cache the cold run wrote). Then an rsync of 1,000 new photos into the playing 100,000-photo
library: the longest loop turn the player reports (`longest_turn_ms` in `ctl status`: a flip or a key waits at most
that long) and the longest round trip of a status request sent every 20 ms meanwhile; and whether the 1,000 photos
joined the show.

Targets (issue 14): first picture within 1.5 s of start at 100,000 photos, RSS growth at most 150 bytes per photo
over the one-photo library, no loop stall over 100 ms during the rsync.

Usage: scale.py [--vitrine PATH] [--sizes 1000,10000,100000] PHOTO...
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.dirname(HERE))
from harness import ctl  # noqa: E402  (Tests/harness.py)


def make_library(folder, photos, count, prefix="IMG_2024"):
    """`count` hard links to the photos in turn, named as a phone names them (IMG_20240101_120000_123.jpg)."""
    os.makedirs(folder, exist_ok=True)
    targets = list(photos)
    for number in range(count):
        day, second = divmod(number, 86400)
        name = f"{prefix}{1 + day // 28 % 12:02d}{1 + day % 28:02d}_{second // 3600:02d}{second // 60 % 60:02d}" \
               f"{second % 60:02d}_{number % 1000:03d}.jpg"
        target = targets[number % len(targets)]
        # ext4 allows 65,000 links to one file: past 60,000 a fresh copy takes the next links.
        if os.stat(target).st_nlink >= 60000:
            fresh = f"{target}.{number}"
            shutil.copyfile(target, fresh)
            targets[number % len(targets)] = target = fresh
        os.link(target, os.path.join(folder, name))


def run_to_first_picture(vitrine, config, order):
    """Seconds from start to exit after the first presented slide, peak RSS in bytes, and the player's log."""
    started = time.monotonic()
    process = subprocess.Popen(
        [vitrine, "play", "--config", config, "--display", "headless:800x480", "--order", order, "--interval", "600",
         "--exit-after", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.monotonic() - started
    log = process.stderr.read()
    process.stderr.close()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        sys.exit(f"scale.py: vitrine exited {process.returncode}:\n{log}")
    return elapsed, usage.ru_maxrss * 1024, log


def write_config(path, library, cache, control, fade=False):
    settings = {"library": library, "deviceTable": os.path.join(ROOT, "Config", "devices.json"),
                "controlSocket": control, "headerCacheFolder": cache, "positionFile": ""}
    if fade:
        settings.update({"transition": "fade", "transitionSeconds": 0.4})
    with open(path, "w", encoding="utf-8") as file:
        json.dump(settings, file)


def rsync_while_playing(vitrine, work, photos, base_count, arrivals):
    # A flat library (photos in the root folder, as on a USB stick): every arrival also makes the player look at the
    # category list.
    library = os.path.join(work, "rsync-library")
    make_library(library, photos, base_count)
    source = os.path.join(work, "rsync-source")
    # rsync copies: the new photos are copies of the smallest photo given, so the run measures the player.
    smallest = min(photos, key=os.path.getsize)
    make_library(source, [smallest], arrivals, prefix="IMG_2025")
    control = os.path.join(work, "rsync.sock")
    config = os.path.join(work, "rsync.json")
    write_config(config, library, "", control, fade=True)
    player = subprocess.Popen(
        [vitrine, "play", "--config", config, "--display", "headless:800x480", "--interval", "0.5"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            if player.poll() is not None:
                sys.exit(f"scale.py: the player ended: {player.stderr.read()}")
            try:
                status = json.loads(ctl(control, "status"))
                if status["count"] == base_count and status["presented"] >= 2:
                    break
            except (OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                sys.exit("scale.py: the player did not start playing within 60 s")
            time.sleep(0.05)
        ctl(control, "status")  # the longest turn counts from here
        sync = subprocess.Popen(["rsync", "-a", source + "/", library + "/"])
        longest_trip = 0.0
        longest_turn = 0.0
        largest_rss = 0.0
        joined_at = None
        started = time.monotonic()
        while True:
            sent = time.monotonic()
            status = json.loads(ctl(control, "status"))
            longest_trip = max(longest_trip, time.monotonic() - sent)
            longest_turn = max(longest_turn, status["longest_turn_ms"] / 1000)
            largest_rss = max(largest_rss, status["rss_mib"])
            if sync.poll() is not None and status["count"] == base_count + arrivals:
                joined_at = time.monotonic() - started
                break
            if time.monotonic() - started > 120:
                break
            time.sleep(0.02)
        sync.wait()
        return {"turn": longest_turn, "trip": longest_trip, "joined": joined_at, "count": status["count"],
                "rss": largest_rss}
    finally:
        player.terminate()
        player.wait(timeout=30)
        player.stderr.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vitrine", default=os.path.join(ROOT, ".build", "release", "vitrine"))
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--arrivals", type=int, default=1000)
    parser.add_argument("photos", nargs="+")
    arguments = parser.parse_args()
    sizes = [int(size) for size in arguments.sizes.split(",")]
    if shutil.which("rsync") is None:
        sys.exit("scale.py: rsync is needed (apt-get install rsync)")
    work = tempfile.mkdtemp(prefix="vitrine-scale-")
    try:
        # The photos are copied once so the hard links are on the work folder's filesystem.
        photos = []
        for number, photo in enumerate(arguments.photos):
            copy = os.path.join(work, f"photo{number}.jpg")
            shutil.copyfile(photo, copy)
            photos.append(copy)
        print(f"# {platform.machine()}, {os.cpu_count()} cores; {arguments.vitrine}")
        print(f"# photos: {', '.join(os.path.basename(photo) for photo in arguments.photos)}; headless 800x480")
        print(f"{'photos':>7} {'order':<7} {'first picture s':>16} {'x 1 photo':>10} {'warm s':>7} "
              f"{'peak RSS MiB':>13} {'bytes/photo':>12}")
        reference = {}
        results = []
        for count in [1] + sizes:
            library = os.path.join(work, f"library-{count}")
            make_library(os.path.join(library, "Photos"), photos, count)
            for order in ["name", "newest"]:
                cache = os.path.join(work, f"cache-{count}-{order}")
                config = os.path.join(work, f"play-{count}.json")
                write_config(config, library, cache, os.path.join(work, "play.sock"))
                cold, rss, _ = run_to_first_picture(arguments.vitrine, config, order)
                warm = run_to_first_picture(arguments.vitrine, config, order)[0] if order == "newest" else None
                if count == 1:
                    reference[order] = (cold, rss)
                base_time, base_rss = reference[order]
                per_photo = (rss - base_rss) / count if count > 1 else 0
                warm_text = f"{warm:7.2f}" if warm is not None else f"{'-':>7}"
                print(f"{count:>7} {order:<7} {cold:16.2f} {cold / base_time:10.2f} {warm_text} "
                      f"{rss / 1048576:13.1f} {per_photo:12.0f}", flush=True)
                results.append((count, order, cold, warm, per_photo))
            shutil.rmtree(library)
        print(f"# rsync of {arguments.arrivals} new photos into a playing flat library of {max(sizes)} photos "
              f"(fades on, a slide every 0.5 s):")
        figures = rsync_while_playing(arguments.vitrine, work, photos, max(sizes), arguments.arrivals)
        joined = f"all joined the show {figures['joined']:.1f} s after the rsync began" if figures["joined"] \
            else f"only {figures['count'] - max(sizes)} joined within 120 s"
        print(f"longest loop turn {figures['turn'] * 1000:.0f} ms, longest status round trip "
              f"{figures['trip'] * 1000:.0f} ms, largest RSS {figures['rss']:.1f} MiB; {joined}")
        largest = [result for result in results if result[0] == max(sizes)]
        verdicts = []
        for count, order, cold, warm, per_photo in largest:
            first = warm if warm is not None else cold
            verdicts.append((f"first picture at {count} photos, {order}{' (warm)' if warm is not None else ''}",
                             first <= 1.5, f"{first:.2f} s (target 1.5 s)"))
            verdicts.append((f"RSS growth per photo, {order}", per_photo <= 150, f"{per_photo:.0f} B (target 150 B)"))
        verdicts.append(("longest loop turn during the rsync", figures["turn"] <= 0.1,
                         f"{figures['turn'] * 1000:.0f} ms (target 100 ms)"))
        verdicts.append(("the new photos joined the show", figures["joined"] is not None, joined))
        for name, met, figure in verdicts:
            print(f"{'MET ' if met else 'MISS'}  {name}: {figure}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

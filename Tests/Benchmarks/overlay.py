#!/usr/bin/python3
"""What the clock and date overlay costs, each figure against a reference measured in the same run:

1. one minute's redraw (`vitrine bench --overlay`: the corner copied between the scanout buffers, the old lines
   taken off, the new ones painted) against copying a frame, at 1920x1080 and 1080x1920;
2. peak RSS of `vitrine play` over 100 slides at 0.1 s on a headless 1920x1080 panel with the overlay on and off
   (three runs each, alternating; medians);
3. CPU of two players side by side for three minutes at a one-hour interval, one with the clock and date and one
   without (/proc ticks; the minute redraws are all the first one does).

Usage: overlay.py [--vitrine PATH] PHOTO...
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def bench_redraw(vitrine, panel):
    out = subprocess.run([vitrine, "bench", "--overlay", "--panel", panel, "--runs", "600", "--tsv"],
                         check=True, capture_output=True, text=True).stdout.splitlines()
    return dict(zip(out[0].split("\t"), out[1].split("\t")))


def write_config(work, name, library, overlay):
    config = {"library": library, "deviceTable": f"{REPO}/Config/devices.json", "positionFile": "",
              "headerCacheFolder": "", "renditionCacheFolder": "", "controlSocket": f"{work}/{name}.sock"}
    if overlay:
        config["overlay"] = {"clock": "HH:mm", "date": True}
    path = f"{work}/{name}.json"
    with open(path, "w") as f:
        json.dump(config, f)
    return path


def peak_rss_mib(vitrine, config):
    measured = subprocess.run(["/usr/bin/time", "-f", "%M", vitrine, "play", "--config", config, "--display",
                               "headless:1920x1080", "--interval", "0.1", "--exit-after", "100"],
                              capture_output=True, text=True, check=True)
    return int(measured.stderr.strip().splitlines()[-1]) / 1024


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vitrine", default=f"{REPO}/.build/release/vitrine")
    parser.add_argument("--minutes", type=float, default=3)
    parser.add_argument("photos", nargs="+")
    args = parser.parse_args()
    vitrine = os.path.abspath(args.vitrine)
    work = tempfile.mkdtemp(prefix="vitrine-overlay-bench-")
    library = f"{work}/library"
    os.makedirs(f"{library}/Bench")
    for photo in args.photos:
        os.symlink(os.path.abspath(photo), f"{library}/Bench/{os.path.basename(photo)}")

    print("# the clock's minute redraw, in-process (600 runs, medians)")
    for panel in ("1920x1080", "1080x1920"):
        figures = bench_redraw(vitrine, panel)
        print(f"{panel}: redraw {figures['redraw_median_ms']} ms over a {figures['strip_pixels']}-pixel corner; "
              f"copying a frame {figures['copy_median_ms']} ms; ratio {figures['ratio']}")

    on = write_config(work, "on", library, True)
    off = write_config(work, "off", library, False)
    peaks = {"on": [], "off": []}
    for _ in range(3):
        for name, config in (("off", off), ("on", on)):
            peaks[name].append(peak_rss_mib(vitrine, config))
    on_peak, off_peak = statistics.median(peaks["on"]), statistics.median(peaks["off"])
    print(f"# peak RSS, 100 slides at 0.1 s on a headless 1920x1080 panel (3 runs each, medians)")
    print(f"overlay on {on_peak:.1f} MiB, off {off_peak:.1f} MiB: {on_peak - off_peak:+.1f} MiB, "
          f"ratio {on_peak / off_peak:.3f}")

    players = {}
    for name, config in (("on", on), ("off", off)):
        players[name] = subprocess.Popen([vitrine, "play", "--config", config, "--display", "headless:1920x1080",
                                          "--interval", "3600"], stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
    # After start-up (the first decode and the prefetch).
    time.sleep(5)
    before = {name: cpu_seconds(player.pid) for name, player in players.items()}
    time.sleep(args.minutes * 60)
    after = {name: cpu_seconds(player.pid) for name, player in players.items()}
    for player in players.values():
        player.terminate()
        player.wait(timeout=20)
    used = {name: after[name] - before[name] for name in players}
    tick = 1 / os.sysconf("SC_CLK_TCK")
    print(f"# CPU over {args.minutes:g} minutes at a one-hour interval, side by side (ticks of {tick * 1000:.0f} ms)")
    print(f"overlay on {used['on']:.2f} s ({used['on'] / args.minutes:.3f} s a minute), "
          f"off {used['off']:.2f} s ({used['off'] / args.minutes:.3f} s a minute)")
    subprocess.run(["rm", "-rf", work])
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""The player's own memory: what `vitrine play` holds beside the photos it decodes.

For each build (this one, and with --before another, measured in the same run): the peak resident memory of
`vitrine --version` (the binary and the libraries it maps at start), of `vitrine play` before its first photo (the
`stats: started` line: screen buffers, links, code), and over 30 slides of the photos given with the default 1 s
crossfades at 1920x1080 and 800x480, headless, with the largest anonymous memory any slide's stats line reported
(heap and frames, which the kernel cannot drop; the rest is clean file pages). Issue 33's targets are printed beside.

Usage: footprint.py [--vitrine PATH] [--before PATH] [--budget MIB] PHOTO...
(--budget sets memoryBudgetMiB: below 63 MiB at 1920x1080 there is no room for a third scanout buffer, which a
machine that blends slowly, such as a guest under emulation, would otherwise take.)
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SLIDES = 30
PANELS = ["1920x1080", "800x480"]
TARGETS = {"play 1920x1080 peak": 42.0, "play 800x480 peak": 20.0, "started 800x480": 12.0}


def run(command, log):
    """Runs `command` with stderr to `log`; its peak RSS in MiB, from GNU time (a child forked from Python would
    count Python's pages from before its exec)."""
    peak = log + ".peak"
    with open(log, "w", encoding="utf-8") as errors:
        status = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", peak] + command, stdout=subprocess.DEVNULL,
                                stderr=errors).returncode
    if status != 0:
        sys.exit(f"footprint.py: {' '.join(command)} failed; see {log}")
    return int(open(peak, encoding="utf-8").read().split()[-1]) / 1024


def figures(vitrine, config, work, tag):
    result = {}
    result["--version peak"] = run([vitrine, "--version"], os.path.join(work, f"{tag}-version.log"))
    for panel in PANELS:
        log = os.path.join(work, f"{tag}-{panel}.log")
        peak = run([vitrine, "play", "--config", config, "--display", f"headless:{panel}", "--interval", "1.5",
                    "--exit-after", str(SLIDES), "--stats"], log)
        text = open(log, encoding="utf-8").read()
        result[f"play {panel} peak"] = peak
        anonymous = [float(m) for m in re.findall(r"stats: slide .* anon ([0-9.]+) MiB", text)]
        result[f"play {panel} anon"] = max(anonymous) if anonymous else float("nan")
        started = re.search(r"stats: started rss ([0-9.]+) MiB anon ([0-9.]+) MiB", text)
        result[f"started {panel}"] = float(started.group(1)) if started else float("nan")
    libraries = subprocess.run(["ldd", vitrine], capture_output=True, text=True).stdout
    result["libraries mapped at start"] = float(sum(1 for line in libraries.splitlines() if ".so" in line))
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vitrine", default=os.path.join(ROOT, ".build", "release", "vitrine"))
    parser.add_argument("--before", help="another build to measure beside it")
    parser.add_argument("--budget", type=int, help="memoryBudgetMiB for the plays")
    parser.add_argument("photos", nargs="+")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        show = os.path.join(work, "library", "Show")
        os.makedirs(show)
        for photo in args.photos:
            os.symlink(os.path.realpath(photo), os.path.join(show, os.path.basename(photo)))
        config = os.path.join(work, "vitrine.json")
        settings = {"library": os.path.join(work, "library"),
                    "deviceTable": os.path.join(ROOT, "Config", "devices.json"),
                    "controlSocket": os.path.join(work, "control.sock")}
        if args.budget:
            settings["memoryBudgetMiB"] = args.budget
        with open(config, "w", encoding="utf-8") as file:
            json.dump(settings, file)
        now = figures(os.path.realpath(args.vitrine), config, work, "now")
        before = figures(os.path.realpath(args.before), config, work, "before") if args.before else None
    print(f"# {os.uname().machine}, {os.cpu_count()} cores; {SLIDES} slides of {len(args.photos)} photos, 1 s fades")
    print(f"# photos: {' '.join(os.path.basename(p) for p in args.photos)}")
    header = f"{'figure (MiB)':<28} {'this build':>10}"
    if before:
        header += f" {'before':>10} {'ratio':>7}"
    print(header + f" {'target':>8}")
    for name, value in now.items():
        line = f"{name:<28} {value:10.1f}"
        if before:
            old = before.get(name, float("nan"))
            line += f" {old:10.1f} {value / old:7.2f}" if old == old else f" {'-':>10} {'-':>7}"
        target = TARGETS.get(name)
        if target:
            line += f" {'<= ' + format(target, '.0f'):>8} {'met' if value <= target else 'NOT MET'}"
        print(line)


if __name__ == "__main__":
    main()

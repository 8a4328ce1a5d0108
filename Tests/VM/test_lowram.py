#!/usr/bin/python3
"""A small board: a guest with 256 MB of RAM and one CPU on a 1920x1080 virtio-gpu panel plays large photos (20 to
24 megapixels, one progressive, one sideways by EXIF) for 200 slides with the release binary. Passes when every
slide is shown and none skipped, nothing is OOM-killed, the frame budget is never exceeded, and the player's peak
RSS stays within its profile's budget plus what the player takes before any photo (measured in the same guest).
Prints the figures and `N passed, M failed`; skips when QEMU or a kernel is missing.

Usage: test_lowram.py [--vitrine PATH] [--slides N] [PHOTO ...]   (default: large photos generated here)
"""
import os
import random
import re
import shutil
import sys

from PIL import Image, ImageDraw, ImageFilter

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import vm as vmlib  # noqa: E402
from harness import record, results, summary  # noqa: E402  (Tests/harness.py)


def large_photos(folder):
    """Camera-sized JPEGs with detail everywhere (so they do not compress to nothing)."""
    shapes = [("a-24mp.jpg", (6000, 4000), {}), ("b-20mp.jpg", (5472, 3648), {}),
              ("c-12mp-progressive.jpg", (4000, 3000), {"progressive": True}),
              ("d-12mp-sideways.jpg", (4032, 3024), {"exif": "6"})]
    rng = random.Random(3)
    for name, size, options in shapes:
        small = Image.effect_noise((size[0] // 8, size[1] // 8), 60).convert("RGB")
        draw = ImageDraw.Draw(small)
        for _ in range(40):
            x, y = rng.randrange(small.width), rng.randrange(small.height)
            draw.ellipse([x, y, x + rng.randrange(20, 200), y + rng.randrange(20, 200)],
                         fill=tuple(rng.randrange(256) for _ in range(3)))
        image = small.resize(size, Image.BILINEAR).filter(ImageFilter.DETAIL)
        extra = {}
        if options.get("exif"):
            exif = Image.Exif()
            exif[0x0112] = int(options["exif"])
            extra["exif"] = exif.tobytes()
        image.save(f"{folder}/{name}", quality=90, progressive=options.get("progressive", False), **extra)


def peak_kib(text):
    match = re.search(r"VmHWM:\s+(\d+) kB", text)
    return int(match.group(1)) if match else None


def main():
    def options(p):
        p.add_argument("--slides", type=int, default=200)
        p.add_argument("photos", nargs="*")
    args = vmlib.arguments(__doc__, options)
    ok, reason = vmlib.check()
    if not ok:
        return vmlib.skipped("VM low-RAM test", reason)
    vitrine = args.vitrine
    with vmlib.VM(device="virtio", width=1920, height=1080, memory_mb=256) as vm:
        share = vm.share
        os.makedirs(f"{share}/lib/Large")
        os.makedirs(f"{share}/empty/Nothing")
        if args.photos:
            for photo in args.photos:
                shutil.copy(photo, f"{share}/lib/Large/")
        else:
            large_photos(f"{share}/lib/Large")
        sizes = sorted(Image.open(f"{share}/lib/Large/{n}").size for n in os.listdir(f"{share}/lib/Large"))
        print(f"photos: {', '.join(f'{w}x{h}' for w, h in sizes)}; guest: 256 MB, 1 CPU")
        rc, meminfo = vm.run("grep -E 'MemTotal|MemAvailable' /proc/meminfo")
        print("guest " + " ".join(meminfo.split()))
        config = ('{"library": "/share/%s", "deviceTable": "%s/Config/devices.json", "interval": 0.05, '
                  '"transition": "fade", "controlSocket": "/tmp/%s.sock", "display": {"backend": "drm"}}\n')
        for name in ("lib", "empty"):
            with open(f"{share}/{name}.json", "w") as f:
                f.write(config % (name, REPO, name))

        # The player's own memory before any photo: the same binary on the same screen with nothing to show.
        vm.spawn("idle", f"exec {vitrine} play --config /share/empty.json")
        rc, _ = vm.run("sleep 3")
        rc, idle = vm.run("cat /proc/$(cat /share/idle.pid)/status")
        vm.stop("idle")
        idle_kib = peak_kib(idle)

        vm.spawn("play", f"exec {vitrine} play --config /share/lib.json --stats --exit-after {args.slides}")
        status, output = vm.wait("play", timeout=1800)
        # The player has exited: its peak RSS (getrusage) is in the stats line it wrote for every slide.
        rss = [float(v) for v in re.findall(r" peak ([0-9.]+) MiB", output)]
        used = [float(v) for v in re.findall(r" budget ([0-9.]+)/", output)]
        limit = re.search(r"budget [0-9.]+/([0-9.]+) MiB", output)
        limit_mib = float(limit.group(1)) if limit else 0.0
        profile = re.search(r"\(profile ([^,]+), compose ([0-9x]+), budget ([0-9.]+ MiB)", output)
        rc, kernel_log = vm.run("dmesg | grep -iE 'out of memory|oom-kill|killed process' || true")
        shown = re.search(r"presented (\d+) slides; exiting as asked", output)
        skipped = [line for line in output.splitlines() if "skipped" in line or "refused" in line]
        decode = [float(v) for v in re.findall(r" decode ([0-9.]+) ms", output)]

        print(f"profile: {profile.group(1) if profile else '?'}, compose {profile.group(2) if profile else '?'}, "
              f"budget {limit_mib:.1f} MiB")
        if decode:
            decode.sort()
            print(f"decode to panel in the guest (TCG): median {decode[len(decode) // 2]:.0f} ms, "
                  f"max {decode[-1]:.0f} ms")
        record(status == 0 and shown is not None and int(shown.group(1)) == args.slides and not skipped,
               f"{args.slides} slides shown, none skipped (exit {status}; {len(skipped)} skipped)")
        record(kernel_log.strip() == "", f"no OOM kill in the kernel log ({kernel_log.strip()[:200]})")
        record(bool(used) and max(used) <= limit_mib,
               f"frame and decode memory within the budget: at most {max(used) if used else 0:.1f} of "
               f"{limit_mib:.1f} MiB")
        peak = max(rss) if rss else 0.0
        idle_mib = (idle_kib or 0) / 1024
        record(bool(rss) and idle_kib is not None and peak <= limit_mib + idle_mib,
               f"peak RSS {peak:.1f} MiB <= budget {limit_mib:.1f} MiB + the idle player's {idle_mib:.1f} MiB")
        if not all(results):
            print(output[-3000:])
    return summary()


if __name__ == "__main__":
    sys.exit(main())

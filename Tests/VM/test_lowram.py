#!/usr/bin/python3
"""A small board: a guest with 256 MB of RAM and one CPU on a 1920x1080 virtio-gpu panel plays what phones write
(a 24 and a 48 MP iPhone-like grid HEIC, a 12 MP AVIF, a 200 MP baseline JPEG, a 12 MP lossless WebP, an 8 MP
progressive JPEG) with crossfades for 20 slides with the release binary, while `vitrine renditions` makes their
renditions beside it at idle priority. Passes when every slide is shown and none skipped or refused, the renditions
are all written, nothing is OOM-killed and no swap is used, the frame budget is never exceeded, and the player's
peak RSS stays within its profile's budget plus what the player takes before any photo (measured in the same
guest). Prints the figures and `N passed, M failed`; skips when QEMU or a kernel is missing.

Usage: test_lowram.py [--vitrine PATH] [--slides N] [PHOTO ...]   (default: the photos generated here)
"""
import os
import random
import re
import shutil
import sys

from PIL import Image, ImageDraw, ImageFilter

Image.MAX_IMAGE_PIXELS = 1_000_000_000

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import vm as vmlib  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "Tools"))
from heif_grid import grid_from_picture  # noqa: E402
from harness import record, results, summary  # noqa: E402  (Tests/harness.py)


def detailed(size, seed):
    """A picture with detail everywhere (so it does not compress to nothing), of `size`."""
    rng = random.Random(seed)
    small = Image.effect_noise((max(1, size[0] // 8), max(1, size[1] // 8)), 60).convert("RGB")
    draw = ImageDraw.Draw(small)
    for _ in range(40):
        x, y = rng.randrange(small.width), rng.randrange(small.height)
        draw.ellipse([x, y, x + rng.randrange(20, 200), y + rng.randrange(20, 200)],
                     fill=tuple(rng.randrange(256) for _ in range(3)))
    return small.resize(size, Image.BILINEAR).filter(ImageFilter.DETAIL)


def phone_photos(folder):
    """What phones write today, from detailed pictures: iPhone grids, an AVIF, Samsung's 200 MP JPEG."""
    with open(f"{folder}/a-24mp-grid.heic", "wb") as f:
        f.write(grid_from_picture(detailed((5712, 4284), 1), quality=80))
    with open(f"{folder}/b-48mp-grid.heic", "wb") as f:
        f.write(grid_from_picture(detailed((8064, 6048), 2), quality=80, transforms=[("irot", 3)]))
    detailed((4032, 3024), 3).save(f"{folder}/c-12mp.avif", quality=80)
    detailed((16320, 12240), 4).save(f"{folder}/d-200mp.jpg", quality=85)
    detailed((4032, 3024), 5).save(f"{folder}/e-12mp-lossless.webp", lossless=True, method=0)
    # A camera's progressive JPEG: libjpeg holds every coefficient of it until its last scan (24 MiB at 8 MP; at
    # 12 MP, 36 MiB, which with two frames held for the fade is more than this 72 MiB profile has, and is refused
    # until its rendition is made).
    detailed((3264, 2448), 6).save(f"{folder}/f-8mp-progressive.jpg", quality=90, progressive=True)


def peak_kib(text):
    match = re.search(r"VmHWM:\s+(\d+) kB", text)
    return int(match.group(1)) if match else None


def main():
    def options(p):
        p.add_argument("--slides", type=int, default=20)
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
            phone_photos(f"{share}/lib/Large")
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
        _, idle_output = vm.stop("idle")
        idle_kib = peak_kib(idle)

        profile_id = re.search(r"\(profile ([^,]+),", idle_output)
        vm.spawn("play", f"exec {vitrine} play --config /share/lib.json --stats --exit-after {args.slides}")
        # Renditions beside the show, as a board makes them for a library copied onto it.
        # A panel the table does not know plays with a profile made from its size; hdmi-1080p has the same canvas.
        known = profile_id and not profile_id.group(1).startswith("fallback-")
        profiles = f" --profiles {profile_id.group(1)}" if known else " --profiles hdmi-1080p"
        vm.spawn("renditions", f"exec nice -n 19 {vitrine} renditions --config /share/lib.json --jobs 1{profiles}")
        status, output = vm.wait("play", timeout=1800)
        renditions_status, renditions_output = vm.wait("renditions", timeout=1800)
        rc, swap = vm.run("grep -E 'SwapTotal|SwapFree' /proc/meminfo")
        # The player has exited: its peak RSS (getrusage) is in the stats line it wrote for every slide.
        rss = [float(v) for v in re.findall(r" peak ([0-9.]+) MiB", output)]
        used = [float(v) for v in re.findall(r" budget ([0-9.]+)/", output)]
        limit = re.search(r"budget [0-9.]+/([0-9.]+) MiB", output)
        limit_mib = float(limit.group(1)) if limit else 0.0
        profile = re.search(r"\(profile ([^,]+), compose ([0-9x]+), budget ([0-9.]+ MiB)", output)
        rc, kernel_log = vm.run("dmesg | grep -iE 'out of memory|oom-kill|killed process' || true")
        shown = re.search(r"presented (\d+) slides; exiting as asked", output)
        skipped = [line for line in output.splitlines() if "skipped" in line or "refused" in line]
        rc, written = vm.run("ls /share/lib/Large | grep -c '@' || true")
        swap_fields = dict(line.split(":") for line in swap.strip().splitlines() if ":" in line)
        swap_used = int(swap_fields.get("SwapTotal", "0 kB").split()[0]) - int(
            swap_fields.get("SwapFree", "0 kB").split()[0])
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
        photos = len(os.listdir(f"{share}/lib/Large")) - int(written.strip() or 0)
        record(renditions_status == 0 and int(written.strip() or 0) >= photos,
               f"renditions made beside the show: {written.strip()} for {photos} photos (exit {renditions_status})"
               + ("" if renditions_status == 0 else f": {renditions_output[-500:]}"))
        record(swap_used == 0, f"no swap used ({swap_used} kB)")
        record(bool(used) and max(used) <= limit_mib,
               f"frame and decode memory within the budget: at most {max(used) if used else 0:.1f} of "
               f"{limit_mib:.1f} MiB")
        peak = max(rss) if rss else 0.0
        idle_mib = (idle_kib or 0) / 1024
        record(bool(rss) and idle_kib is not None and peak <= limit_mib + idle_mib,
               f"peak RSS {peak:.1f} MiB <= budget {limit_mib:.1f} MiB + the idle player's {idle_mib:.1f} MiB")
        if not all(results):
            print("\n".join(skipped[:10]))
            print(output[-3000:])
    return summary()


if __name__ == "__main__":
    sys.exit(main())

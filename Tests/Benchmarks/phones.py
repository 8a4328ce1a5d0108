#!/usr/bin/python3
"""What today's phones write, decoded for a panel: time and peak memory of vitrine beside pillow-heif and vipsthumbnail.

Usage:
  phones.py --vitrine PATH [--panel 1920x1080] [--runs 3] [--cache DIR] PHOTO.jpg

From one real photo it writes (once; kept in --cache, default .build/bench-phones):
  HEIC 24 MP grid   5712x4284, 512x512 HEVC tiles as an iPhone 15 writes them (Tests/Tools/heif_grid.py)
  HEIC 48 MP grid   8064x6048, "HEIF Max"
  AVIF 12 MP        4032x3024, one AV1 picture (pillow-heif's encoder)
  JPEG 200 MP       16320x12240 baseline, Samsung's 200 MP mode
  WebP lossless     4032x3024

For each, in this one run: vitrine's median time (`vitrine bench`, the whole path), pillow-heif's (HEIC, AVIF) and
vipsthumbnail's (all) median, and the peak RSS above the process (vitrine's peak for this photo minus its peak
for a 16x16 photo of the same format). Times are printed as ratios against the reference of the same run.

Targets (issue 33): peak above the process at most one output frame plus 16 MiB for every photo; HEIC and AVIF
time at most 1.0x pillow-heif's; JPEG and WebP at most vipsthumbnail's. Prints one line per photo and the
verdicts; exits 1 when a target is missed.
"""
import argparse
import os
import sys

from PIL import Image, ImageOps

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tools"))
import formats  # noqa: E402  (the measuring helpers are shared with formats.py)
from heif_grid import grid_from_picture  # noqa: E402

Image.MAX_IMAGE_PIXELS = 1_000_000_000


def write_set(photo, cache):
    os.makedirs(cache, exist_ok=True)
    stem = os.path.splitext(os.path.basename(photo))[0]
    files = {
        "HEIC 24 MP grid": os.path.join(cache, f"{stem}-24mp.heic"),
        "HEIC 48 MP grid": os.path.join(cache, f"{stem}-48mp.heic"),
        "AVIF 12 MP": os.path.join(cache, f"{stem}-12mp.avif"),
        "JPEG 200 MP": os.path.join(cache, f"{stem}-200mp.jpg"),
        "WebP lossless": os.path.join(cache, f"{stem}-12mp-lossless.webp"),
    }
    picture = None

    def resized(size):
        nonlocal picture
        if picture is None:
            with Image.open(photo) as im:
                picture = ImageOps.exif_transpose(im).convert("RGB")
        return picture.resize(size, Image.LANCZOS)

    for kind, path in files.items():
        if os.path.exists(path):
            continue
        partial = path + ".partial"
        if kind == "HEIC 24 MP grid":
            data = grid_from_picture(resized((5712, 4284)), quality=80)
            with open(partial, "wb") as out:
                out.write(data)
        elif kind == "HEIC 48 MP grid":
            data = grid_from_picture(resized((8064, 6048)), quality=80)
            with open(partial, "wb") as out:
                out.write(data)
        elif kind == "AVIF 12 MP":
            resized((4032, 3024)).save(partial, format="AVIF", quality=80)
        elif kind == "JPEG 200 MP":
            resized((16320, 12240)).save(partial, format="JPEG", quality=90)
        else:
            resized((4032, 3024)).save(partial, format="WEBP", lossless=True, method=1)
        os.rename(partial, path)
    tiny = {}
    for suffix, kind in ((".heic", "HEIF"), (".avif", "AVIF"), (".jpg", "JPEG"), (".webp", "WEBP")):
        tiny[suffix] = os.path.join(cache, "tiny" + suffix)
        if not os.path.exists(tiny[suffix]):
            Image.new("RGB", (16, 16), (90, 120, 150)).save(tiny[suffix], format=kind, quality=90)
    return files, tiny


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vitrine", required=True)
    parser.add_argument("--panel", default="1920x1080")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cache", default=".build/bench-phones")
    parser.add_argument("--before", help="another vitrine binary (an earlier release) measured the same way")
    parser.add_argument("photo")
    args = parser.parse_args()
    if formats.pillow_heif is None:
        print("phones.py: pillow-heif is missing (make bench-deps)")
        return 1
    width, height = (int(v) for v in args.panel.lower().split("x"))
    frame_mib = width * height * 4 / 2**20
    files, tiny = write_set(args.photo, args.cache)
    print(f"phones.py: from {os.path.basename(args.photo)}; panel {args.panel}, {args.runs} runs each; "
          f"frame {frame_mib:.1f} MiB; reference: pillow-heif for HEIC and AVIF, vipsthumbnail for the rest")
    print(f"{'photo':<17}{'size':>12} {'reduction':>10} {'vitrine ms':>11} {'ref ms':>9} {'v/ref':>6}"
          f" {'vips ms':>9} {'above process MiB':>18} {'target':>7} {'ref above':>10}"
          + (f" {'before ms':>10} {'before above':>13}" if args.before else ""))
    failed = []
    scratch = os.path.join(args.cache, "out")
    os.makedirs(scratch, exist_ok=True)
    for kind, path in files.items():
        with Image.open(path) as im:
            size = f"{im.width}x{im.height}"
        suffix = os.path.splitext(path)[1]
        heif = suffix in (".heic", ".avif")
        vitrine_ms, reduction = formats.vitrine_median_ms(args.vitrine, path, args.panel, args.runs)
        vips_ms = formats.vips_median_ms(path, args.panel, args.runs, scratch)
        reference_ms = formats.pillow_median_ms(path, width, height, args.runs) if heif else vips_ms
        out = os.path.join(scratch, "out.ppm")
        base = formats.peak_rss_kib([args.vitrine, "render", tiny[suffix], "--panel", args.panel, "--output", out])
        peak = formats.peak_rss_kib([args.vitrine, "render", path, "--panel", args.panel, "--output", out])
        if heif:
            ref_peak = formats.peak_rss_kib(
                ["/usr/bin/python3", "-c", formats.PILLOW_ONE_SHOT, path, str(width), str(height), "1"])
            ref_base = formats.peak_rss_kib(
                ["/usr/bin/python3", "-c", formats.PILLOW_ONE_SHOT, tiny[suffix], str(width), str(height), "1"])
        else:
            ref_peak = formats.peak_rss_kib(["vipsthumbnail", path, "--size", args.panel, "-o",
                                             os.path.join(scratch, "vips-%s.jpg")])
            ref_base = formats.peak_rss_kib(["vipsthumbnail", tiny[suffix], "--size", args.panel, "-o",
                                             os.path.join(scratch, "vips-%s.jpg")])
        above = (peak - base) / 1024
        target = frame_mib + 16
        before = ""
        if args.before:
            try:
                before_ms, _ = formats.vitrine_median_ms(args.before, path, args.panel, args.runs)
                before_base = formats.peak_rss_kib(
                    [args.before, "render", tiny[suffix], "--panel", args.panel, "--output", out])
                before_peak = formats.peak_rss_kib(
                    [args.before, "render", path, "--panel", args.panel, "--max-megapixels", "1000", "--output", out])
                before = f" {before_ms:>10.1f} {(before_peak - before_base) / 1024:>13.1f}"
            except Exception:  # noqa: BLE001 (an earlier release may refuse the photo: that is the figure)
                before = f" {'refused':>10} {'-':>13}"
        print(f"{kind:<17}{size:>12} {reduction:>10} {vitrine_ms:>11.1f} {reference_ms:>9.1f}"
              f" {vitrine_ms / reference_ms:>6.2f} {vips_ms:>9.1f} {above:>18.1f} {target:>7.1f}"
              f" {(ref_peak - ref_base) / 1024:>10.1f}{before}", flush=True)
        if above > target:
            failed.append(f"{kind}: {above:.1f} MiB above the process, over the frame plus 16 MiB ({target:.1f})")
        if vitrine_ms > reference_ms:
            reference = "pillow-heif" if heif else "vipsthumbnail"
            failed.append(f"{kind}: {vitrine_ms / reference_ms:.2f}x {reference}'s time")
    for line in failed:
        print(f"MISSED {line}")
    print("phones.py: all targets met" if not failed else f"phones.py: {len(failed)} targets missed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

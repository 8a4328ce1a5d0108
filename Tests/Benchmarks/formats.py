#!/usr/bin/python3
"""Per format, decode-to-panel time and peak memory of vitrine beside vipsthumbnail and Pillow, in one run.

Usage:
  formats.py --vitrine PATH [--panel 1920x1080] [--runs 5] PHOTO.jpg

From one JPEG photo (a 12 MP phone photo makes the point) Pillow writes, into a temporary folder: a PNG, an
Adam7-interlaced PNG is not written (Pillow cannot), a lossy WebP (quality 90), a lossless WebP, and with
pillow-heif a HEIC and an AVIF (quality 90); the PNG is also written at twice the size each way (4x the pixels),
to show that a non-interlaced PNG passes through in constant memory. For each file, in this one run:

  vitrine   `vitrine bench --tsv --runs N`: median ms of the whole path (header, decode, resample, place)
  vips      `vipsthumbnail FILE --size WxH`: median wall time of N process runs (includes process start and the
            JPEG save)
  pillow    one /usr/bin/python3 process (+pillow-heif): open, exif_transpose, LANCZOS resize to the contain
            size; median of N in-process runs

and peak RSS (/usr/bin/time -f %M) of one `vitrine render`, one vipsthumbnail and one Pillow one-shot. Times are
printed as ratios to vipsthumbnail's (this machine is noisy: only ratios within one run mean anything) and to
pillow-heif's for HEIC. Memory is printed as vitrine's peak above its peak for a 16x16 photo of the same format
(the process itself: binary, libraries, font), against the panel frame.

Targets (issue 15): PNG and WebP peak above the process at most the panel frame plus 8 MiB, whatever the
non-interlaced size; PNG and WebP time no worse than vipsthumbnail's; HEIC within 1.2x of pillow-heif's. Prints
one line per file and the verdicts; exits 1 when a target is missed.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from PIL import Image, ImageOps

try:
    import pillow_heif

    pillow_heif.register_heif_opener()
    pillow_heif.register_avif_opener()
except ImportError:
    pillow_heif = None

PILLOW_ONE_SHOT = """
import sys, time
from PIL import Image, ImageOps
try:
    import pillow_heif
    pillow_heif.register_heif_opener(); pillow_heif.register_avif_opener()
except ImportError:
    pass
path, width, height, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
times = []
for _ in range(runs):
    start = time.perf_counter()
    with Image.open(path) as im:
        if im.format == "JPEG":
            im.draft("RGB", (width, height))
        im = ImageOps.exif_transpose(im).convert("RGB")
        scale = min(width / im.width, height / im.height)
        im.resize((max(1, round(im.width * scale)), max(1, round(im.height * scale))), Image.LANCZOS)
    times.append(time.perf_counter() - start)
times.sort()
print(times[len(times) // 2] * 1000)
"""


def peak_rss_kib(command):
    result = subprocess.run(
        ["/usr/bin/time", "-f", "%M"] + command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True,
        text=True)
    return int(result.stderr.strip().splitlines()[-1])


def vitrine_median_ms(vitrine, path, panel, runs):
    output = subprocess.run(
        [vitrine, "bench", path, "--panel", panel, "--runs", str(runs), "--tsv"], capture_output=True, text=True,
        check=True).stdout
    name = os.path.basename(path)
    fields = next(line.split("\t") for line in output.splitlines() if line.startswith(name + "\t"))
    return float(fields[6]), fields[3]


def vips_median_ms(path, panel, runs, folder):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(["vipsthumbnail", path, "--size", panel, "-o", os.path.join(folder, "vips-%s.jpg")],
                       check=True, capture_output=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def pillow_median_ms(path, width, height, runs):
    output = subprocess.run(["/usr/bin/python3", "-c", PILLOW_ONE_SHOT, path, str(width), str(height), str(runs)],
                            capture_output=True, text=True, check=True).stdout
    return float(output.strip())


def write_variants(source, folder):
    with Image.open(source) as im:
        exif = im.getexif().tobytes()
        picture = ImageOps.exif_transpose(im).convert("RGB")
    files = {}
    files["PNG"] = os.path.join(folder, "photo.png")
    picture.save(files["PNG"], compress_level=6)
    files["PNG 4x pixels"] = os.path.join(folder, "photo-4x.png")
    picture.resize((picture.width * 2, picture.height * 2), Image.BILINEAR).save(files["PNG 4x pixels"],
                                                                                 compress_level=6)
    files["WebP"] = os.path.join(folder, "photo.webp")
    picture.save(files["WebP"], quality=90, exif=exif)
    files["WebP lossless"] = os.path.join(folder, "photo-lossless.webp")
    picture.save(files["WebP lossless"], lossless=True, method=1)
    if pillow_heif is not None:
        files["HEIC"] = os.path.join(folder, "photo.heic")
        picture.save(files["HEIC"], quality=90)
        files["AVIF"] = os.path.join(folder, "photo.avif")
        picture.save(files["AVIF"], quality=90)
    tiny = Image.new("RGB", (16, 16), (90, 120, 150))
    baselines = {"PNG": "tiny.png", "WebP": "tiny.webp", "HEIC": "tiny.heic", "AVIF": "tiny.avif"}
    for kind, name in baselines.items():
        if kind in ("HEIC", "AVIF") and pillow_heif is None:
            continue
        tiny.save(os.path.join(folder, name), quality=90)
    return files, {kind: os.path.join(folder, name) for kind, name in baselines.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vitrine", required=True)
    parser.add_argument("--panel", default="1920x1080")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("photo")
    args = parser.parse_args()
    width, height = (int(v) for v in args.panel.lower().split("x"))
    frame_mib = width * height * 4 / 2**20
    failed = []
    with tempfile.TemporaryDirectory(prefix="vitrine-formats-") as folder:
        files, tiny = write_variants(args.photo, folder)
        print(f"formats.py: {os.path.basename(args.photo)} written as {', '.join(files)}; panel {args.panel}, "
              f"{args.runs} runs each; frame {frame_mib:.1f} MiB")
        print(f"{'format':<15}{'size':>11} {'reduction':>10} {'vitrine ms':>11} {'vips ms':>9} {'pillow ms':>10}"
              f" {'v/vips':>7} {'v/pillow':>9} {'vitrine MiB':>12} {'above process':>14} {'vips MiB':>9}"
              f" {'pillow MiB':>11}")
        process_kib = {}
        for kind, path in tiny.items():
            process_kib[kind] = peak_rss_kib([args.vitrine, "render", path, "--panel", args.panel, "--output",
                                              os.path.join(folder, "tiny.ppm")])
        for kind, path in files.items():
            with Image.open(path) as im:
                size = f"{im.width}x{im.height}"
            vitrine_ms, reduction = vitrine_median_ms(args.vitrine, path, args.panel, args.runs)
            vips_ms = vips_median_ms(path, args.panel, args.runs, folder)
            pillow_ms = pillow_median_ms(path, width, height, args.runs)
            vitrine_kib = peak_rss_kib([args.vitrine, "render", path, "--panel", args.panel, "--output",
                                        os.path.join(folder, "out.ppm")])
            vips_kib = peak_rss_kib(["vipsthumbnail", path, "--size", args.panel, "-o",
                                     os.path.join(folder, "vips-%s.jpg")])
            pillow_kib = peak_rss_kib(["/usr/bin/python3", "-c", PILLOW_ONE_SHOT, path, str(width), str(height),
                                       "1"])
            base = process_kib[kind.split()[0]]
            above = (vitrine_kib - base) / 1024
            print(f"{kind:<15}{size:>11} {reduction:>10} {vitrine_ms:>11.1f} {vips_ms:>9.1f} {pillow_ms:>10.1f}"
                  f" {vitrine_ms / vips_ms:>7.2f} {vitrine_ms / pillow_ms:>9.2f} {vitrine_kib / 1024:>12.1f}"
                  f" {above:>14.1f} {vips_kib / 1024:>9.1f} {pillow_kib / 1024:>11.1f}", flush=True)
            if kind.startswith(("PNG", "WebP")):
                if kind != "WebP lossless" and above > frame_mib + 8:
                    failed.append(f"{kind}: {above:.1f} MiB above the process, over the frame plus 8 MiB")
                if vitrine_ms > vips_ms:
                    failed.append(f"{kind}: {vitrine_ms / vips_ms:.2f}x vipsthumbnail's time")
            if kind == "HEIC" and vitrine_ms > 1.2 * pillow_ms:
                failed.append(f"HEIC: {vitrine_ms / pillow_ms:.2f}x pillow-heif's time, over 1.2x")
    for line in failed:
        print(f"MISSED {line}")
    print("formats.py: all targets met" if not failed else f"formats.py: {len(failed)} targets missed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

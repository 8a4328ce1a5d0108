#!/usr/bin/python3
"""Compare `vitrine render --fit contain` with a Pillow reference.

Usage:
  check_against_pillow.py --vitrine PATH [--panels 800x480,1920x1080]
                          [--min-psnr 30] [--variants N] [--refuse-unloadable]
                          PHOTO_OR_DIR...

A directory stands for the JPEG, PNG, WebP, HEIF and AVIF files directly
inside it (by suffix), sorted by name.  --variants N also writes, with
Pillow, PNG and WebP copies of the first N JPEGs (EXIF orientation carried
over), upright HEIC and AVIF copies (with pillow-heif), and a few kinds of
PNG and WebP that JPEG has no counterpart for (alpha, palette, grey, 16-bit
grey, animation), and checks those the same way.  --refuse-unloadable holds
every file Pillow cannot load to the broken_* rule below.  HEIF and AVIF are
read through pillow-heif when it is installed.

For every photo Pillow can fully load as a JPEG, PNG, WebP, HEIF or AVIF, and
for every panel, the script renders it with vitrine (binary PPM of exactly the
panel size) and builds the reference with Pillow: open, ImageOps.exif_transpose,
alpha composed over black, an embedded RGB ICC profile converted to sRGB with
ImageCms, convert('RGB'), resize to the contain size with Image.LANCZOS, pasted
centred on a black canvas.  A (photo, panel) passes if vitrine exits 0, the
PSNR inside the picture rectangle is >= --min-psnr and every pixel outside
it is exactly (0, 0, 0).

What Pillow loads whole is expected on the screen, whatever the file is
called: a file named broken_* whose damage libjpeg decodes past (stray
bytes between markers: libjpeg warns, Pillow loads it, every viewer shows
it) must be rendered and match like any other.  Files named broken_* that
Pillow cannot load (truncated, not a JPEG, a header bomb) must make vitrine
fail cleanly: an exit status in 1..125 (not a signal) with the file's base
name on stderr.  Files Pillow cannot load as a JPEG (another format, a load
error, a decompression bomb) and that are not named broken_* are reported
as skipped and count as passes whatever vitrine did.

Prints one line per (photo, panel), then `N passed, M failed`; the exit
status is 1 when M > 0.  Needs only Pillow (run with /usr/bin/python3).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import io
import math
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

try:
    from PIL import Image, ImageChops, ImageCms, ImageOps, ImageStat
except ImportError:  # pragma: no cover - depends on the interpreter
    sys.exit("check_against_pillow.py: Pillow is missing; run it with "
             "/usr/bin/python3 (apt-get install python3-pil)")
try:
    import pillow_heif
    pillow_heif.register_heif_opener()
    pillow_heif.register_avif_opener()
    # libheif reports some rotated grid images (Canon's HIF) at their stored size and decodes them turned; what
    # it decodes is what a viewer shows, and what vitrine shows.
    pillow_heif.options.ALLOW_INCORRECT_HEADERS = True
except ImportError:  # pragma: no cover - depends on the interpreter
    pillow_heif = None

# Phones write 108 and 200 MP photos, which vitrine shows (up to its sanity limit of 1000 MP): Pillow's guard against
# decompression bombs (179 MP) would skip exactly the photos that must be compared.
Image.MAX_IMAGE_PIXELS = 1_000_000_000

PHOTO_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".heic", ".heif", ".hif", ".avif")
# Pillow reports JPEGs carrying an MPF index (UltraHDR, multi-picture) as
# 'MPO'; it is a JpegImageFile subclass and loads the primary JPEG image.
SHOWN_FORMATS = ("JPEG", "MPO", "PNG", "WEBP", "HEIF", "AVIF")
RENDER_TIMEOUT_S = 300


@dataclass
class Outcome:
    ok: bool
    name: str
    panel: str
    psnr: str
    note: str = ""


# Photos handled at once: one per core, two at most.
WORKERS = max(1, min(2, os.cpu_count() or 1))


def parse_panel(text: str) -> tuple[int, int]:
    try:
        w_text, h_text = text.lower().split("x")
        w, h = int(w_text), int(h_text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad panel size {text!r} (want WxH)") from None
    if w <= 0 or h <= 0:
        raise argparse.ArgumentTypeError(f"bad panel size {text!r} (want WxH)")
    return w, h


def parse_panels(text: str) -> list[tuple[int, int]]:
    panels = [parse_panel(p.strip()) for p in text.split(",") if p.strip()]
    if not panels:
        raise argparse.ArgumentTypeError("no panel sizes given")
    return panels


def collect(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for arg in paths:
        p = Path(arg)
        if p.is_dir():
            files.extend(sorted(
                (c for c in p.iterdir()
                 if c.is_file() and c.suffix.lower() in PHOTO_SUFFIXES),
                key=lambda c: c.name))
        elif p.exists():
            files.append(p)
        else:
            sys.exit(f"check_against_pillow.py: {arg}: no such file or directory")
    return files


def contain_rect(cw: int, ch: int, pw: int, ph: int) -> tuple[int, int, int, int]:
    """(x0, y0, w, h) of the picture on a CW x CH canvas; round half up."""
    if pw * ch >= ph * cw:
        w = cw
        # floor(ph*cw/pw + 0.5), in exact integer arithmetic
        h = min(ch, max(1, (2 * ph * cw + pw) // (2 * pw)))
    else:
        h = ch
        w = min(cw, max(1, (2 * pw * ch + ph) // (2 * ph)))
    return (cw - w) // 2, (ch - h) // 2, w, h


def load_with_pillow(path: Path) -> tuple[Image.Image | None, str]:
    """The EXIF-transposed image, or None and why Pillow cannot use it."""
    try:
        with Image.open(path) as im:
            if im.format not in SHOWN_FORMATS:
                return None, f"format {im.format}, not one Vitrine shows"
            # An animation shows its first frame; Pillow opens on it.
            im.load()
            icc = im.info.get("icc_profile")
            shown = flatten(ImageOps.exif_transpose(im))
            return to_srgb(shown, icc) if icc else shown, ""
    except Exception as exc:  # noqa: BLE001 - any failure means "cannot decode"
        return None, f"{type(exc).__name__}: {exc}"


def flatten(im: Image.Image) -> Image.Image:
    """Transparency composed over black, the background vitrine render uses; other images as they are."""
    if im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
        rgba = im.convert("RGBA")
        return Image.alpha_composite(Image.new("RGBA", rgba.size, (0, 0, 0, 255)), rgba).convert("RGB")
    if im.mode in ("I;16", "I;16B", "I"):
        # 16-bit grey: the top 8 bits, as an 8-bit display shows it.
        return im.point(lambda v: v / 256).convert("L")
    return im


def to_srgb(im: Image.Image, icc: bytes) -> Image.Image:
    """An RGB picture tagged with an ICC profile, converted to sRGB by ImageCms (LittleCMS, perceptual intent), as
    vitrine converts it; grey and CMYK profiles are left alone, as vitrine leaves them."""
    if im.mode not in ("RGB", "P"):
        return im
    try:
        source = ImageCms.ImageCmsProfile(io.BytesIO(icc))
    except Exception:  # noqa: BLE001 - an unreadable profile: vitrine shows the photo as decoded
        return im
    if source.profile.xcolor_space.strip() != "RGB":
        return im
    return ImageCms.profileToProfile(im.convert("RGB"), source, ImageCms.createProfile("sRGB"),
                                     renderingIntent=0, outputMode="RGB")


def make_variants(files: list[Path], count: int, folder: Path) -> list[Path]:
    """PNG and WebP copies of the first `count` JPEGs Pillow loads, and the kinds only PNG and WebP have."""
    made: list[Path] = []
    jpegs = []
    for photo in files:
        if photo.name.startswith("broken_"):
            continue
        try:
            with Image.open(photo) as im:
                if im.format not in ("JPEG", "MPO") or im.width * im.height > 20_000_000:
                    continue
                im.load()
                exif = im.getexif().tobytes()
                jpegs.append((photo, im.convert("RGB"), exif))
        except Exception:  # noqa: BLE001 - not a variant source
            continue
        if len(jpegs) == count:
            break
    def copies(entry: tuple[Path, Image.Image, bytes]) -> list[Path]:
        photo, im, exif = entry
        stem = folder / photo.stem
        im.save(f"{stem}.png", exif=exif)
        im.save(f"{stem}.lossy.webp", quality=90, exif=exif)
        im.save(f"{stem}.lossless.webp", lossless=True, exif=exif)
        written = [Path(f"{stem}.png"), Path(f"{stem}.lossy.webp"), Path(f"{stem}.lossless.webp")]
        if pillow_heif is not None:
            # HEIF carries orientation as a transform of its own, so the copy is written upright.
            upright = ImageOps.exif_transpose(Image.open(photo)).convert("RGB")
            upright.save(f"{stem}.heic", quality=90)
            upright.save(f"{stem}.avif", quality=90)
            written += [Path(f"{stem}.heic"), Path(f"{stem}.avif")]
        return written

    # The encoders let go of the GIL: a photo's copies on each core.
    with concurrent.futures.ThreadPoolExecutor(max_workers=WORKERS) as pool:
        for written in pool.map(copies, jpegs):
            made += written
    if jpegs:
        _, first, _ = jpegs[0]
        alpha = Image.linear_gradient("L").resize(first.size)
        with_alpha = first.copy()
        with_alpha.putalpha(alpha)
        with_alpha.save(folder / "variant-alpha.png")
        with_alpha.save(folder / "variant-alpha.webp", quality=90)
        first.convert("P", palette=Image.ADAPTIVE, colors=256).save(folder / "variant-palette.png")
        first.convert("L").save(folder / "variant-grey.png")
        first.convert("L").point(lambda v: v * 257, "I").convert("I;16").save(folder / "variant-grey16.png")
        frames = [first] + [im for _, im, _ in jpegs[1:2]]
        frames = [f.resize(first.size) for f in frames]
        frames[0].save(folder / "variant-animated.webp", save_all=True, append_images=frames[1:],
                       duration=500, quality=90)
        made += [folder / n for n in ("variant-alpha.png", "variant-alpha.webp", "variant-palette.png",
                                      "variant-grey.png", "variant-grey16.png", "variant-animated.webp")]
    return made


def reference(src: Image.Image, cw: int, ch: int) -> tuple[Image.Image, tuple[int, int, int, int]]:
    x0, y0, w, h = contain_rect(cw, ch, src.width, src.height)
    if src.mode == "L":
        # Same result as convert-then-resize (each band is resampled
        # independently with the same filter), three times cheaper.
        pic = src.resize((w, h), Image.LANCZOS).convert("RGB")
    else:
        pic = src.convert("RGB").resize((w, h), Image.LANCZOS)
    return pic, (x0, y0, w, h)


def run_render(vitrine: str, photo: Path, panel: tuple[int, int],
               out: Path) -> tuple[int | None, str]:
    """(returncode or None on timeout, stderr)."""
    cmd = [vitrine, "render", str(photo), "--panel", f"{panel[0]}x{panel[1]}",
           "--fit", "contain", "--output", str(out)]
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=RENDER_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {RENDER_TIMEOUT_S} s"
    return proc.returncode, proc.stderr.decode("utf-8", "replace").strip()


def describe_exit(rc: int | None, stderr: str) -> str:
    if rc is None:
        return stderr
    first = stderr.splitlines()[0] if stderr else "(no stderr)"
    if rc < 0:
        return f"killed by signal {-rc}: {first}"
    return f"exit {rc}: {first}"


def psnr_of(mse: float) -> float:
    return math.inf if mse == 0 else 10.0 * math.log10(255.0 * 255.0 / mse)


def fmt_psnr(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.2f}"


def nonblack_outside(img: Image.Image, rect: tuple[int, int, int, int]) -> tuple[int, tuple | None]:
    """Number of non-(0,0,0) pixels outside rect, and their bounding box."""
    x0, y0, w, h = rect
    cw, ch = img.size
    boxes = [(0, 0, cw, y0), (0, y0 + h, cw, ch), (0, y0, x0, y0 + h), (x0 + w, y0, cw, y0 + h)]
    count = 0
    bbox: tuple | None = None
    for box in boxes:
        if box[2] <= box[0] or box[3] <= box[1]:
            continue
        region = img.crop(box)
        if all(hi == 0 for _, hi in region.getextrema()):
            continue
        bands = [b.point(lambda v: 255 if v else 0) for b in region.split()]
        mask = ImageChops.lighter(ImageChops.lighter(bands[0], bands[1]), bands[2])
        count += mask.histogram()[255]
        bb = mask.getbbox()
        if bb is not None:
            bb = (bb[0] + box[0], bb[1] + box[1], bb[2] + box[0], bb[3] + box[1])
            bbox = bb if bbox is None else (min(bbox[0], bb[0]), min(bbox[1], bb[1]),
                                            max(bbox[2], bb[2]), max(bbox[3], bb[3]))
    return count, bbox


def check_expected_failure(vitrine: str, photo: Path, panel: tuple[int, int],
                           tmp: Path, why: str, refuse_all: bool = False) -> Outcome:
    name = photo.name
    panel_text = f"{panel[0]}x{panel[1]}"
    out = tmp / f"{name}.{panel_text}.ppm"
    out.unlink(missing_ok=True)
    rc, stderr = run_render(vitrine, photo, panel, out)
    left_output = out.exists()
    out.unlink(missing_ok=True)
    did = "vitrine exit 0 (rendered)" if rc == 0 else "vitrine " + describe_exit(rc, stderr)
    if not name.startswith("broken_") and not refuse_all:
        return Outcome(True, name, panel_text, "-",
                       f"skipped: Pillow cannot decode ({why}); {did}")
    if rc is None:
        return Outcome(False, name, panel_text, "-", f"broken file: {did}")
    if rc == 0:
        return Outcome(False, name, panel_text, "-", "broken file but vitrine exited 0")
    if not 1 <= rc <= 125:
        return Outcome(False, name, panel_text, "-",
                       f"broken file: vitrine must exit 1..125, got {did}")
    if name not in stderr:
        return Outcome(False, name, panel_text, "-",
                       f"broken file: base name missing from stderr ({did})")
    notes = [f"rejected as expected ({did})"]
    if len(stderr.splitlines()) != 1:
        notes.append(f"note: {len(stderr.splitlines())} stderr lines")
    if left_output:
        notes.append("note: left an output file behind")
    return Outcome(True, name, panel_text, "-", "; ".join(notes))


def check_render(vitrine: str, photo: Path, src: Image.Image, panel: tuple[int, int],
                 tmp: Path, min_psnr: float) -> Outcome:
    name = photo.name
    cw, ch = panel
    panel_text = f"{cw}x{ch}"
    out = tmp / f"{name}.{panel_text}.ppm"
    out.unlink(missing_ok=True)
    rc, stderr = run_render(vitrine, photo, panel, out)
    if rc != 0:
        out.unlink(missing_ok=True)
        return Outcome(False, name, panel_text, "-", "vitrine " + describe_exit(rc, stderr))
    try:
        with Image.open(out) as im:
            fmt, size, mode = im.format, im.size, im.mode
            got = im.convert("RGB")
    except Exception as exc:  # noqa: BLE001
        return Outcome(False, name, panel_text, "-", f"output unreadable: {exc}")
    finally:
        out.unlink(missing_ok=True)
    if fmt != "PPM" or mode != "RGB":
        return Outcome(False, name, panel_text, "-", f"output is {fmt} {mode}, want a P6 PPM")
    if size != (cw, ch):
        return Outcome(False, name, panel_text, "-",
                       f"output is {size[0]}x{size[1]}, want {panel_text}")

    pic, rect = reference(src, cw, ch)
    x0, y0, w, h = rect
    diff = ImageChops.difference(got.crop((x0, y0, x0 + w, y0 + h)), pic)
    mse = sum(ImageStat.Stat(diff).sum2) / (w * h * 3)
    psnr = psnr_of(mse)
    reasons = []
    if psnr < min_psnr:
        reasons.append(f"PSNR below {min_psnr:.2f} (picture {w}x{h} at {x0},{y0})")
    bad, bbox = nonblack_outside(got, rect)
    if bad:
        reasons.append(f"{bad} letterbox pixels not black, within {bbox} "
                       f"(picture {w}x{h} at {x0},{y0})")
    return Outcome(not reasons, name, panel_text, fmt_psnr(psnr), "; ".join(reasons))


def print_outcome(o: Outcome) -> None:
    line = f"{'PASS' if o.ok else 'FAIL'}  {o.name:<44} {o.panel:>9}  PSNR {o.psnr:>6}"
    if o.note:
        line += f"  {o.note}"
    print(line, flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(
        description="Compare vitrine render (contain) with a Pillow LANCZOS reference.")
    ap.add_argument("--vitrine", required=True, help="path of the vitrine binary")
    ap.add_argument("--panels", type=parse_panels, default=parse_panels("800x480,1920x1080"),
                    help="comma-separated panel sizes WxH (default 800x480,1920x1080)")
    ap.add_argument("--min-psnr", type=float, default=30.0,
                    help="minimum PSNR in dB inside the picture (default 30)")
    ap.add_argument("--variants", type=int, default=0, metavar="N",
                    help="also check PNG and WebP variants written from the first N JPEGs")
    ap.add_argument("--refuse-unloadable", action="store_true",
                    help="every file Pillow cannot load must be refused, whatever its name (not only broken_*)")
    ap.add_argument("photos", nargs="+", metavar="PHOTO_OR_DIR")
    args = ap.parse_args()

    vitrine = os.path.abspath(args.vitrine) if os.sep in args.vitrine else args.vitrine
    if os.sep in vitrine and not os.access(vitrine, os.X_OK):
        sys.exit(f"check_against_pillow.py: {args.vitrine}: not an executable file")
    files = collect(args.photos)
    if not files:
        sys.exit("check_against_pillow.py: no photos found")

    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="vitrine-ref-") as tmp_name:
        tmp = Path(tmp_name)
        if args.variants:
            variants = tmp / "variants"
            variants.mkdir()
            files += make_variants(files, args.variants, variants)
        def check_photo(photo: Path) -> list[Outcome]:
            src, why = load_with_pillow(photo)
            outcomes = []
            for panel in args.panels:
                if src is None:
                    outcomes.append(check_expected_failure(vitrine, photo, panel, tmp, why, args.refuse_unloadable))
                else:
                    outcomes.append(check_render(vitrine, photo, src, panel, tmp, args.min_psnr))
            if src is not None:
                src.close()
            return outcomes

        # A photo at a time on each core: vitrine renders in one while Pillow (which lets go of the GIL in its
        # decoders and resize) builds another's reference. Printed in the photos' order.
        with concurrent.futures.ThreadPoolExecutor(max_workers=WORKERS) as pool:
            for outcomes in pool.map(check_photo, files):
                for outcome in outcomes:
                    print_outcome(outcome)
                    if outcome.ok:
                        passed += 1
                    else:
                        failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

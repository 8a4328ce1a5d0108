#!/usr/bin/python3
"""Writes the small HEIF and AVIF fixtures under Tests/Fixtures/heif/ (committed; run again only to change them).

Pictures of our own: the quadrants the unit tests use (red, green, blue, yellow: TL, TR, BL, BR), encoded by
pillow-heif (its wheel's libheif with x265 and aom) so that the tests read files another encoder wrote.
Usage: Tests/Tools/make_heif_fixtures.py (needs pillow-heif: pip install pillow-heif==0.13.1).
"""
import os

import pillow_heif
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "Fixtures", "heif")
COLORS = [(230, 20, 20), (20, 200, 40), (30, 40, 220), (240, 220, 30)]


def quadrants(width, height, alpha=None):
    image = Image.new("RGBA" if alpha is not None else "RGB", (width, height))
    for index, color in enumerate(COLORS):
        left, top = (index % 2) * (width // 2), (index // 2) * (height // 2)
        box = (left, top, width if index % 2 else width // 2, height if index // 2 else height // 2)
        image.paste(color + ((alpha,) if alpha is not None else ()), box)
    return image


def main():
    pillow_heif.register_heif_opener()
    pillow_heif.register_avif_opener()
    os.makedirs(OUT, exist_ok=True)
    quadrants(96, 64).save(os.path.join(OUT, "quadrants.heic"), quality=95)
    quadrants(96, 64).save(os.path.join(OUT, "quadrants.avif"), quality=95)
    quadrants(64, 64, alpha=128).save(os.path.join(OUT, "half-transparent.heic"), quality=95)
    exif = Image.Exif()
    exif[0x8769] = {0x9003: "2024:07:14 18:30:05"}
    quadrants(96, 64).save(os.path.join(OUT, "dated.heic"), quality=90, exif=exif.tobytes())
    # A phone-sized photo (12 MP): decoded whole it needs more than a 48 MiB board's budget.
    quadrants(4032, 3024).save(os.path.join(OUT, "phone-sized.heic"), quality=50)


if __name__ == "__main__":
    main()

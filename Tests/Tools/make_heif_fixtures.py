#!/usr/bin/python3
"""Writes the small HEIF and AVIF fixtures under Tests/Fixtures/heif/ (committed; run again only to change them).

Pictures of our own: the quadrants the unit tests use (red, green, blue, yellow: TL, TR, BL, BR), encoded by
pillow-heif (its wheel's libheif with x265 and aom) so that the tests read files another encoder wrote.
Usage: Tests/Tools/make_heif_fixtures.py (needs pillow-heif: pip install pillow-heif==0.13.1).
"""
import os

import pillow_heif
from PIL import Image

from heif_grid import grid_file, still_file

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


# Twelve colours far apart, one per tile of a 4x3 grid, row by row: a tile out of place shows.
TILE_COLORS = [
    (230, 20, 20), (20, 200, 40), (30, 40, 220), (240, 220, 30),
    (240, 240, 240), (20, 20, 20), (230, 30, 230), (30, 220, 230),
    (250, 140, 20), (120, 60, 20), (120, 120, 120), (20, 110, 60),
]


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as out:
        out.write(data)


def grids():
    tiles = [Image.new("RGB", (64, 64), color) for color in TILE_COLORS]
    # The canvas is smaller than the tiles cover, as iPhones' 4032x3024 is on 512-pixel tiles.
    write("grid.heic", grid_file(tiles, 4, (250, 180)))
    write("grid.avif", grid_file(tiles, 4, (250, 180), avif=True))
    # Turned a quarter anti-clockwise, then mirrored left to right: upright it is 180 wide and 250 high.
    write("grid-turned.heic", grid_file(tiles, 4, (250, 180), transforms=[("irot", 1), ("imir", 1)]))
    # A clean aperture of 128x96 centred 32 pixels right of and 16 below the canvas's centre: the rectangle from
    # (93, 58), as libheif rounds it (left 93.5 truncated), to (220, 153).
    write("grid-cropped.heic", grid_file(
        tiles, 4, (250, 180), transforms=[("clap", (128, 1, 96, 1, 32, 1, 16, 1))]))
    # A thumbnail larger than the primary image and of another picture: the primary is what is shown.
    write("grid-larger-thumbnail.heic", grid_file(
        tiles, 4, (250, 180), thumbnail=Image.new("RGB", (320, 320), (255, 0, 255))))


def stills():
    # An AVIF turned a quarter clockwise (irot 3) and then cropped to its middle 64x48 of the turned 64x96.
    write("still-turned.avif", still_file(quadrants(96, 64), transforms=[("irot", 3), ("clap", (64, 1, 48, 1, 0, 1, 0, 1))]))


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
    grids()
    stills()


if __name__ == "__main__":
    main()

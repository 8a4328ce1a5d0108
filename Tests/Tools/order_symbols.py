#!/usr/bin/python3
"""Writes Sources/vitrine/symbol-order.txt: the functions of the vitrine binary that `vitrine play` runs.

The linker lays these out first and together (lld's --symbol-ordering-file), so the code a playing frame runs sits
in a few hundred kilobytes of the binary's 7 MB instead of being spread over all of it: the kernel maps a file's
pages around each one touched (fault-around, and whole large folios on newer kernels), so spread-out code costs
resident memory for every neighbour it drags in. The list is read with valgrind's callgrind from headless plays at
1920x1080 and 800x480 of a library with every format (JPEG baseline and progressive, PNG, lossy and lossless WebP,
HEIC grids and stills, AVIF) with crossfades. Names that no longer exist are ignored by the linker, so a stale
list only loses some of the benefit; run `make symbol-order` after large changes.

The linker moves sections, not functions: Vitrine's own code is built with one section per function (Package.swift),
but the Swift standard library's archive keeps 1.6 MB of its code in one plain `.text` section of Swift.o, and a
section goes where the first of its functions on the list puts it. So functions found in an unsplit section larger
than 64 KiB of the toolchain's static archives are listed last: that section then follows the code Vitrine runs
instead of splitting it, and Vitrine's own copies of the same names (optimised specialisations, local to each
module) come right after it.

Usage: order_symbols.py [--vitrine PATH]   (a release build; writes the list and prints its size)
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUTPUT = os.path.join(ROOT, "Sources", "vitrine", "symbol-order.txt")
HEIF_FIXTURES = ["grid.heic", "grid-turned.heic", "phone-sized.heic", "still-turned.avif", "grid.avif"]


def photo(width, height, seed):
    """A photo-like picture: smooth gradients with noise, so every decoder and the resampler do real work."""
    noise = Image.effect_noise((width, height), 40 + seed).convert("RGB")
    gradient = Image.linear_gradient("L").resize((width, height)).convert("RGB")
    return Image.blend(noise, gradient, 0.6)


def make_library(folder):
    show = os.path.join(folder, "Show")
    os.makedirs(show)
    photo(3000, 2000, 1).save(os.path.join(show, "a-baseline.jpg"), quality=90)
    photo(2000, 3000, 2).save(os.path.join(show, "b-progressive.jpg"), quality=85, progressive=True)
    photo(1600, 1200, 3).save(os.path.join(show, "c-photo.png"))
    photo(2400, 1600, 4).save(os.path.join(show, "d-lossy.webp"), quality=80)
    photo(1200, 900, 5).save(os.path.join(show, "e-lossless.webp"), lossless=True)
    for name in HEIF_FIXTURES:
        shutil.copy(os.path.join(ROOT, "Tests", "Fixtures", "heif", name), os.path.join(show, "f-" + name))
    return len(os.listdir(show))


def objdump_by_member(option, archive):
    """Each line `objdump OPTION` prints for the members of `archive`, split in words, with the member's name."""
    member = None
    for line in subprocess.run(["objdump", option, archive], capture_output=True, text=True).stdout.splitlines():
        match = re.match(r"^(\S+):\s+file format", line)
        if match:
            member = match.group(1)
        else:
            yield member, line.split()


def in_unsplit_sections(limit=64 * 1024):
    """The functions the toolchain's static Swift libraries define in a plain `.text` section above `limit` bytes."""
    target = json.loads(subprocess.run(["swiftc", "-print-target-info"], capture_output=True, text=True,
                                       check=True).stdout)
    folder = os.path.join(os.path.dirname(target["paths"]["runtimeResourcePath"]), "swift_static", "linux")
    names = set()
    for archive in sorted(os.listdir(folder)):
        if not archive.endswith(".a"):
            continue
        path = os.path.join(folder, archive)
        large = {member for member, parts in objdump_by_member("-h", path)
                 if len(parts) >= 3 and parts[0].isdigit() and parts[1] == ".text" and int(parts[2], 16) > limit}
        for member, parts in objdump_by_member("-t", path):
            if member in large and len(parts) >= 5 and ".text" in parts and parts[parts.index(".text") - 1] == "F":
                names.add(parts[-1])
    return names


def executed(vitrine, callgrind_output):
    """The names of the functions in `vitrine` that callgrind saw run."""
    objects, names, found = {}, {}, set()
    current, called = None, None
    object_line = re.compile(r"^(c?)ob=\((\d+)\)(?: (.*))?$")
    function_line = re.compile(r"^(c?)fn=\((\d+)\)(?: (.*))?$")
    with open(callgrind_output, encoding="utf-8", errors="replace") as lines:
        for line in lines:
            line = line.rstrip("\n")
            match = object_line.match(line)
            if match:
                callee, number, name = match.groups()
                if name:
                    objects[number] = name
                if callee:
                    called = objects.get(number)
                else:
                    current, called = objects.get(number), None
                continue
            match = function_line.match(line)
            if match:
                callee, number, name = match.groups()
                if name:
                    names[number] = name
                owner = (called or current) if callee else current
                if owner and os.path.realpath(owner) == os.path.realpath(vitrine):
                    found.add(names[number].split("'")[0])
                if callee:
                    called = None
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vitrine", default=os.path.join(ROOT, ".build", "release", "vitrine"))
    args = parser.parse_args()
    vitrine = os.path.realpath(args.vitrine)
    if shutil.which("valgrind") is None:
        sys.exit("order_symbols.py: needs valgrind (apt-get install valgrind)")
    defined = set()
    for line in subprocess.run(["nm", vitrine], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            defined.add(parts[2])
    functions = set()
    with tempfile.TemporaryDirectory() as work:
        count = make_library(os.path.join(work, "library"))
        config = os.path.join(work, "vitrine.json")
        with open(config, "w", encoding="utf-8") as file:
            json.dump({"library": os.path.join(work, "library"),
                       "deviceTable": os.path.join(ROOT, "Config", "devices.json"),
                       "controlSocket": os.path.join(work, "control.sock")}, file)
        for panel in ["1920x1080", "800x480"]:
            output = os.path.join(work, f"callgrind-{panel}.out")
            command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={output}", "--demangle=no",
                       vitrine, "play", "--config", config, "--display", f"headless:{panel}", "--interval", "0.5",
                       "--exit-after", str(count + 1)]
            run = subprocess.run(command, capture_output=True, text=True, timeout=900)
            if run.returncode != 0:
                sys.exit(f"order_symbols.py: the play at {panel} failed:\n{run.stderr[-2000:]}")
            functions |= executed(vitrine, output)
    unsplit = in_unsplit_sections()
    ordered = sorted(name for name in functions if name in defined and name not in unsplit)
    ordered += sorted(name for name in functions if name in defined and name in unsplit)
    with open(OUTPUT, "w", encoding="utf-8") as file:
        file.write("\n".join(ordered) + "\n")
    last = sum(1 for name in functions if name in defined and name in unsplit)
    print(f"{OUTPUT}: {len(ordered)} functions ({last} of them last, as the standard library's unsplit code has them)")


if __name__ == "__main__":
    main()

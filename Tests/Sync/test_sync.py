#!/usr/bin/python3
"""`vitrine sync --once` against real WebDAV servers on loopback, with throw-away configs: Apache's mod_dav (basic
auth, and TLS with a test CA made by openssl) and `rclone serve webdav`; then a server of this script's own that
answers with hostile listings.

1. a first sync of 200 photos in nested folders (names with spaces, accents, % and #; hidden files, a Synology
   @eaDir and a text file that are not synced): every photo in the cache byte for byte, nothing else;
2. a second sync fetches nothing (the access log shows no GET);
3. adds, deletes, renames and a replaced file (same name, new content) on the server: the cache equals the server
   after the next sync, renamed photos are moved (not fetched again), a photo of the user's own in the same folder
   and one at a name the server also has are left alone;
4. a sync killed mid-file leaves only a hidden part file, which the next sync resumes with a range request;
5. a wrong password, a credentials file others can read, the server stopped, TLS without the test CA: exit 1
   with the reason, the cache untouched;
6. the same cycle on rclone (its folders have no ETag, its files' tags are made of time and size);
7. hostile answers (a PROPFIND naming ../../etc/passwd, an escaped ../, an absolute URL to another host, a listing
   naming its parent, malformed XML, a DOCTYPE with entities, a listing that never ends, a redirect loop, a file
   larger than its listing said): refused with one line each, nothing written outside the cache, the cache as it
   was.

Prints PASS/FAIL per check and `N passed, M failed`. Usage: test_sync.py --vitrine BIN
"""
import argparse
import hashlib
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

try:
    from PIL import Image
except ImportError:
    print("FAIL  PIL is missing (make sync-test installs python3-pil)")
    sys.exit(1)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
import harness  # noqa: E402  (Tests/harness.py)
from harness import record, summary  # noqa: E402
import servers  # noqa: E402

VITRINE = None
SUMMARY = re.compile(r"in sync: (\d+) photos on the server; (\d+) fetched \(([\d.]+) MB\), (\d+) moved, (\d+) deleted, "
                     r"(\d+) unchanged in ([\d.]+) s")


def make_photo(path, seed, size=(320, 240)):
    """A small JPEG unlike any other: noise from its seed."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    image = Image.effect_noise(size, 40 + seed % 50).convert("RGB")
    image.putpixel((0, 0), (seed % 256, seed // 256 % 256, 7))
    image.save(path, quality=85)


def make_server_tree(data, count=200):
    """`count` photos in nested folders, a few awkward names, and files a sync must pass over."""
    names = []
    for index in range(count):
        year = 2019 + index % 5
        month = 1 + index // 5 % 12
        name = f"{year}/{month:02d}/IMG_{index:04d}.jpg"
        if index % 50 == 7:
            name = f"{year}/Sommer am Meer é/{index:04d} strand #1 100%.jpg"
        names.append(name)
        make_photo(f"{data}/{name}", index)
    for extra in (".DS_Store", "@eaDir/IMG_0001.jpg/SYNOFILE_THUMB_XL.jpg", "notes.txt", ".hidden/secret.jpg"):
        os.makedirs(os.path.dirname(f"{data}/{extra}"), exist_ok=True)
        with open(f"{data}/{extra}", "wb") as f:
            f.write(b"not a photo of the show\n")
    return names


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def photos_under(folder):
    """Relative path -> digest of every non-hidden file below `folder`."""
    found = {}
    for root, folders, files in os.walk(folder):
        folders[:] = [name for name in folders if not name.startswith(".")]
        for name in files:
            if not name.startswith("."):
                path = os.path.join(root, name)
                found[os.path.relpath(path, folder)] = digest(path)
    return found


def server_photos(data):
    return {path: value for path, value in photos_under(data).items()
            if path.lower().endswith(".jpg") and "@eaDir" not in path}


def hidden_files(folder):
    return [os.path.join(root, name) for root, _, files in os.walk(folder) for name in files if name.startswith(".")
            and ".vitrine-sources" not in root]


CONFIGS = iter(range(1, 1_000_000))


def write_config(work, sources, library="library"):
    """A config file of its own for each call: a later one must not change what an earlier path says."""
    path = f"{work}/vitrine-{next(CONFIGS)}.json"
    with open(path, "w") as f:
        json.dump({"library": library, "sources": sources}, f)
    return path


def credentials(work, name, user, password, mode=0o600):
    path = f"{work}/{name}.credentials"
    with open(path, "w") as f:
        f.write(f"{user}\n{password}\n")
    os.chmod(path, mode)
    return path


def sync(config, *extra, timeout=300):
    started = time.monotonic()
    result = subprocess.run([VITRINE, "sync", "--once", "--config", config, *extra], capture_output=True, text=True,
                            timeout=timeout)
    result.seconds = time.monotonic() - started
    result.summary = SUMMARY.search(result.stdout)
    return result


def counts(result):
    """(listed, fetched, moved, deleted, unchanged) from the summary line, or None."""
    if not result.summary:
        return None
    values = result.summary.groups()
    return tuple(int(values[i]) for i in (0, 1, 3, 4, 5))


def say(result):
    return (result.stdout + result.stderr).strip().replace("\n", " | ")[-400:]


def gets(server, since):
    return [request for request in server.requests()[since:] if request[0] == "GET"]


def apache_cycle(work, apache):
    data = apache.data
    names = make_server_tree(data)
    library = f"{work}/library"
    cache = f"{library}/Family"
    login = credentials(work, "apache", apache.user, apache.password)
    config = write_config(work, [{"kind": "webdav", "url": apache.url(), "credentialsFile": login,
                                  "category": "Family"}])
    servers.open_to_server(data)
    first = sync(config)
    expected = server_photos(data)
    record(first.returncode == 0 and counts(first) == (200, 200, 0, 0, 0),
           f"first sync of 200 photos in nested folders from Apache: exit {first.returncode}, "
           f"{first.seconds:.2f} s ({say(first)})")
    record(photos_under(cache) == expected and len(expected) == 200,
           f"the cache holds every photo byte for byte and nothing else ({len(photos_under(cache))} files)")
    record(not hidden_files(cache), f"no part file left in the cache ({hidden_files(cache)[:3]})")
    awkward = [name for name in names if "%" in name]
    record(all(os.path.isfile(f"{cache}/{name}") for name in awkward),
           f"names with spaces, accents, % and # arrive as named ({awkward[0]})")

    logged = len(apache.requests())
    second = sync(config)
    record(second.returncode == 0 and counts(second) == (200, 0, 0, 0, 200) and not gets(apache, logged),
           f"a second sync fetches nothing ({say(second)}; GETs: {len(gets(apache, logged))})")

    # The user's own photos: one beside the synced ones, one at a name the server is about to have.
    make_photo(f"{cache}/mine.jpg", 9001)
    make_photo(f"{cache}/2019/01/own-and-theirs.jpg", 9002)
    mine = {"mine.jpg": digest(f"{cache}/mine.jpg"),
            "2019/01/own-and-theirs.jpg": digest(f"{cache}/2019/01/own-and-theirs.jpg")}
    for index in range(3):
        make_photo(f"{data}/2024/new/added-{index}.jpg", 5000 + index)
    make_photo(f"{data}/2019/01/own-and-theirs.jpg", 5100)
    os.remove(f"{data}/{names[10]}")
    os.remove(f"{data}/{names[11]}")
    os.makedirs(f"{data}/renamed", exist_ok=True)
    os.rename(f"{data}/{names[20]}", f"{data}/renamed/first.jpg")
    os.rename(f"{data}/{names[21]}", f"{data}/{names[21]}".replace(".jpg", " (renamed).jpg"))
    make_photo(f"{data}/{names[30]}", 7777)
    servers.open_to_server(data)
    logged = len(apache.requests())
    third = sync(config)
    expected = server_photos(data)
    expected_cache = dict(expected)
    expected_cache.update(mine)
    fetched = sorted(path for _, path, _ in gets(apache, logged))
    record(third.returncode == 0 and counts(third) == (202, 4, 2, 2, 195),
           f"adds, deletes, renames and a replaced file: 3 added and 1 replaced fetched, 2 moved, 2 deleted "
           f"({say(third)})")
    record(photos_under(cache) == expected_cache,
           "after it the cache equals the server, plus the user's own photos untouched")
    record(len(fetched) == 4 and not any("renamed" in path for path in fetched),
           f"renamed photos are moved in the cache, not fetched again (GETs: {len(fetched)})")
    record("own-and-theirs.jpg: left alone" in third.stdout,
           f"the name the server shares with a photo of the user's is said, not taken ({say(third)[-160:]})")

    # Resume: a 1.5 MB photo fetched at 64 KiB/s, the sync killed partway.
    make_photo(f"{data}/2024/large.jpg", 4242, size=(1600, 1200))
    servers.open_to_server(data)
    slow = write_config(work, [{"kind": "webdav", "url": apache.url(), "credentialsFile": login,
                                "category": "Family", "bandwidthKiBps": 64}])
    part = f"{cache}/2024/.large.jpg.vitrine-part"
    process = subprocess.Popen([VITRINE, "sync", "--once", "--config", slow], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    grew = harness.until(lambda: os.path.exists(part) and os.path.getsize(part) > 150_000, 60)
    process.kill()
    process.wait()
    cut = os.path.getsize(part) if os.path.exists(part) else 0
    record(grew and not os.path.exists(f"{cache}/2024/large.jpg"),
           f"a sync killed mid-file leaves only the hidden part file ({cut} of {os.path.getsize(f'{data}/2024/large.jpg')} bytes)")
    logged = len(apache.requests())
    resumed = sync(config)
    ranges = [request for request in gets(apache, logged) if request[1].endswith("large.jpg")]
    record(resumed.returncode == 0 and ranges and ranges[0][2] == "206"
           and digest(f"{cache}/2024/large.jpg") == digest(f"{data}/2024/large.jpg") and not os.path.exists(part),
           f"the next sync resumes it with a range request (HTTP {ranges[0][2] if ranges else '-'}) and the photo "
           f"is whole")

    before = photos_under(cache)
    wrong = credentials(work, "wrong", apache.user, "not-it")
    refused = sync(write_config(work, [{"kind": "webdav", "url": apache.url(), "credentialsFile": wrong,
                                        "category": "Family"}]))
    record(refused.returncode == 1 and "login refused" in refused.stderr and photos_under(cache) == before,
           f"a wrong password: exit 1, said, cache untouched ({say(refused)})")
    readable = credentials(work, "readable", apache.user, apache.password, mode=0o644)
    loose = sync(write_config(work, [{"kind": "webdav", "url": apache.url(), "credentialsFile": readable,
                                      "category": "Family"}]))
    record(loose.returncode == 1 and readable in loose.stderr and "others can read" in loose.stderr,
           f"a credentials file others can read is refused by name ({say(loose)})")
    untrusted = sync(write_config(work, [{"kind": "webdav", "url": apache.url(tls=True), "credentialsFile": login,
                                          "category": "Family"}]))
    record(untrusted.returncode == 1 and "caFile" in untrusted.stderr and photos_under(cache) == before,
           f"TLS with a CA the system does not trust: refused, naming caFile ({say(untrusted)})")
    trusted = sync(write_config(work, [{"kind": "webdav", "url": apache.url(tls=True), "credentialsFile": login,
                                        "caFile": apache.ca, "category": "Family"}]))
    record(trusted.returncode == 0 and counts(trusted) == (203, 0, 0, 0, 202),
           f"TLS with the test CA as caFile: in sync ({say(trusted)})")
    apache.stop()
    offline = sync(config)
    record(offline.returncode == 1 and "offline" in offline.stderr and photos_under(cache) == before,
           f"the server stopped: exit 1, offline, nothing deleted ({say(offline)})")
    return first


def samba_cycle(work, samba):
    """SMB: a user share with nested folders and awkward names, changes, a wrong password, a guest share, the
    server stopped."""
    data = samba.data
    names = make_server_tree(data, count=60)
    library = f"{work}/library-smb"
    login = credentials(work, "smb", samba.user, samba.password)
    config = write_config(work, [{"kind": "smb", "url": samba.url() + "Frame/", "credentialsFile": login,
                                  "category": "NAS"}], library=library)
    # The share's folder is the tree's parent: the source names a folder inside the share.
    os.makedirs(f"{data}/Frame")
    for entry in os.listdir(data):
        if entry != "Frame":
            os.rename(f"{data}/{entry}", f"{data}/Frame/{entry}")
    first = sync(config)
    cache = f"{library}/NAS"
    expected = server_photos(f"{data}/Frame")
    record(first.returncode == 0 and counts(first) == (60, 60, 0, 0, 0) and photos_under(cache) == expected,
           f"SMB: a first sync of 60 photos in nested folders from Samba, byte for byte, in {first.seconds:.2f} s "
           f"({say(first)})")
    second = sync(config)
    record(counts(second) == (60, 0, 0, 0, 60), f"SMB: a second sync fetches nothing ({say(second)})")
    frame = f"{data}/Frame"
    make_photo(f"{frame}/2024/added.jpg", 400)
    os.remove(f"{frame}/{names[1]}")
    os.rename(f"{frame}/{names[2]}", f"{frame}/2023/moved é.jpg")
    with open(f"{frame}/{names[3]}", "rb") as f:
        old = f.read()
    make_photo(f"{frame}/{names[3]}", 401)
    # Same size and time would hide a change from any sync that has no tag: the replacement differs in both.
    record(digest(f"{frame}/{names[3]}") != hashlib.sha256(old).hexdigest(), "the replaced photo differs")
    third = sync(config)
    record(third.returncode == 0 and counts(third) == (60, 2, 1, 1, 57) and photos_under(cache) == server_photos(frame),
           f"SMB: an add, a delete, a move and a replaced file ({say(third)})")
    make_photo(f"{frame}/2024/large.jpg", 4243, size=(1600, 1200))
    size = os.path.getsize(f"{frame}/2024/large.jpg")
    slow = write_config(work, [{"kind": "smb", "url": samba.url() + "Frame/", "credentialsFile": login,
                                "category": "NAS", "bandwidthKiBps": 64}], library=library)
    part = f"{cache}/2024/.large.jpg.vitrine-part"
    process = subprocess.Popen([VITRINE, "sync", "--once", "--config", slow], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    grew = harness.until(lambda: os.path.exists(part) and os.path.getsize(part) > 300_000, 60)
    process.kill()
    process.wait()
    cut = os.path.getsize(part) if os.path.exists(part) else 0
    resumed = sync(config)
    megabytes = float(resumed.summary.group(3)) if resumed.summary else size
    record(grew and resumed.returncode == 0 and digest(f"{cache}/2024/large.jpg") == digest(f"{frame}/2024/large.jpg")
           and megabytes * 1e6 <= size - cut + 60_000,
           f"SMB: a sync killed mid-file ({cut} of {size} bytes) resumes from there: {megabytes} MB fetched")
    wrong = credentials(work, "smb-wrong", samba.user, "not-it")
    refused = sync(write_config(work, [{"kind": "smb", "url": samba.url() + "Frame/", "credentialsFile": wrong,
                                        "category": "NAS"}], library=library))
    record(refused.returncode == 1 and "login refused" in refused.stderr and photos_under(cache) == server_photos(frame),
           f"SMB: a wrong password is refused, the cache untouched ({say(refused)})")
    for index in range(3):
        make_photo(f"{samba.public}/shared-{index}.jpg", 500 + index)
    servers.open_to_server(samba.public)
    guest = sync(write_config(work, [{"kind": "smb", "url": samba.url("public"), "category": "Public"}],
                              library=library))
    record(guest.returncode == 0 and counts(guest) == (3, 3, 0, 0, 0)
           and photos_under(f"{library}/Public") == server_photos(samba.public),
           f"SMB: a guest share without a login ({say(guest)})")
    samba.stop()
    offline = sync(config)
    record(offline.returncode == 1 and "offline" in offline.stderr and photos_under(cache) == server_photos(frame),
           f"SMB: the server stopped: offline, nothing deleted ({say(offline)})")


def gradient(path, size):
    """A smooth picture (a PNG of a few MB at 1600x1200) whose downscale any good filter agrees on."""
    width, height = size
    image = Image.new("RGB", size)
    image.putdata([(x * 255 // width, y * 255 // height, (x + y) * 255 // (width + height))
                   for y in range(height) for x in range(width)])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    image.save(path)


def psnr(a, b):
    import math
    pixels = list(zip(a.convert("RGB").getdata(), b.convert("RGB").getdata()))
    error = sum((p - q) ** 2 for one, two in pixels for p, q in zip(one, two)) / (3 * len(pixels))
    return 99.0 if error == 0 else 10 * math.log10(255 ** 2 / error)


def renditions_in_the_cache(work, apache):
    """`keep: rendition`: the cache holds each photo at the size the panel shows it, not the photo."""
    data = f"{apache.data}/keep"
    gradient(f"{data}/big.png", (1600, 1200))
    make_photo(f"{data}/small.jpg", 77, size=(200, 150))
    # What a phone writes: 12 MP of detail, several MB.
    make_photo(f"{data}/phone.jpg", 79, size=(4000, 3000))
    servers.open_to_server(data)
    library = f"{work}/library-keep"
    login = credentials(work, "keep", apache.user, apache.password)
    config = write_config(work, [{"kind": "webdav", "url": apache.url() + "keep/", "credentialsFile": login,
                                  "category": "Keep", "keep": "rendition"}], library=library)
    first = sync(config, "--rendition", "320x240")
    cache = f"{library}/Keep"
    names = sorted(os.listdir(cache)) if os.path.isdir(cache) else []
    rendition = f"{cache}/big@320x240.jpg"
    quality = 0.0
    if os.path.exists(rendition):
        with Image.open(rendition) as made, Image.open(f"{data}/big.png") as original:
            quality = psnr(made, original.resize((320, 240), Image.LANCZOS)) if made.size == (320, 240) else 0.0
    phone = f"{cache}/phone@320x240.jpg"
    kept = os.path.getsize(phone) if os.path.exists(phone) else 0
    record(first.returncode == 0 and names == ["big@320x240.jpg", "phone@320x240.jpg", "small.jpg"] and quality >= 35
           and digest(f"{cache}/small.jpg") == digest(f"{data}/small.jpg"),
           f"keep rendition: a 1600x1200 PNG is kept as a 320x240 JPEG ({quality:.1f} dB against Pillow's "
           f"downscale), a {os.path.getsize(f'{data}/phone.jpg') / 1e6:.1f} MB 12 MP photo as {kept / 1e3:.0f} KB, "
           f"a photo smaller than the panel as it is ({names})")
    again = sync(config, "--rendition", "320x240")
    record(counts(again) == (3, 0, 0, 0, 3), f"keep rendition: a second sync fetches nothing ({say(again)})")
    os.rename(f"{data}/big.png", f"{data}/renamed.png")
    make_photo(f"{data}/small.jpg", 78, size=(1600, 1200))
    servers.open_to_server(data)
    changed = sync(config, "--rendition", "320x240")
    names = sorted(os.listdir(cache)) if os.path.isdir(cache) else []
    record(counts(changed) == (3, 1, 1, 0, 1)
           and names == ["phone@320x240.jpg", "renamed@320x240.jpg", "small@320x240.jpg"],
           f"keep rendition: a renamed photo's rendition is renamed, a photo grown past the panel becomes a "
           f"rendition and its old file goes ({names}; {say(changed)})")
    os.remove(f"{data}/renamed.png")
    gone = sync(config, "--rendition", "320x240")
    record(counts(gone) == (2, 0, 0, 1, 2) and os.path.isdir(cache)
           and sorted(os.listdir(cache)) == ["phone@320x240.jpg", "small@320x240.jpg"],
           f"keep rendition: a photo deleted on the server takes its rendition with it ({say(gone)})")


def rclone_cycle(work, rclone):
    data = rclone.data
    names = make_server_tree(data, count=60)
    library = f"{work}/library-rclone"
    login = credentials(work, "rclone", rclone.user, rclone.password)
    config = write_config(work, [{"kind": "webdav", "url": rclone.url(), "credentialsFile": login,
                                  "subfolderCategories": True, "name": "nas"}], library=library)
    first = sync(config)
    expected = server_photos(data)
    # One category per top folder (2019 ... 2023), photos at the top in one named after the source.
    record(first.returncode == 0 and counts(first) == (60, 60, 0, 0, 0) and photos_under(library) == expected,
           f"rclone: a first sync into one category per subfolder, byte for byte ({say(first)})")
    second = sync(config)
    record(counts(second) == (60, 0, 0, 0, 60), f"rclone: a second sync fetches nothing ({say(second)})")
    make_photo(f"{data}/top.jpg", 300)
    os.remove(f"{data}/{names[3]}")
    os.rename(f"{data}/{names[4]}", f"{data}/2023/moved.jpg")
    make_photo(f"{data}/{names[5]}", 301)
    third = sync(config)
    expected = {(f"nas/{path}" if "/" not in path else path): value for path, value in server_photos(data).items()}
    record(third.returncode == 0 and counts(third) == (60, 2, 1, 1, 57) and photos_under(library) == expected,
           f"rclone: an add (at the top: into the source's own category), a delete, a move and a replaced file "
           f"({say(third)})")
    # A cache of 1 MiB: the newest photos that fit, said; each photo a minute newer than the one before.
    photos = sorted(server_photos(data))
    for index, path in enumerate(photos):
        os.utime(f"{data}/{path}", (1_700_000_000 + index * 60, 1_700_000_000 + index * 60))
    limited = f"{work}/library-limited"
    small = write_config(work, [{"kind": "webdav", "url": rclone.url(), "credentialsFile": login,
                                 "subfolderCategories": True, "name": "nas", "cacheLimitMiB": 1}], library=limited)
    fitted = sync(small)
    wanted, total = set(), 0
    for path in reversed(photos):
        size = os.path.getsize(f"{data}/{path}")
        if total + size <= 1 << 20:
            wanted.add(path if "/" in path else f"nas/{path}")
            total += size
    kept = set(photos_under(limited))
    record(fitted.returncode == 0 and kept == wanted and f"{len(photos) - len(wanted)} older photos do not fit"
           in fitted.stdout,
           f"rclone: cacheLimitMiB 1 keeps the {len(kept)} newest photos that fit ({total} bytes) and says the rest "
           f"do not ({say(fitted)[-120:]})")


COLOURS = {"A": (220, 30, 30), "B": (30, 200, 40), "C": (30, 40, 220), "D": (230, 210, 30), "E": (200, 40, 200),
           "B2": (30, 200, 200)}
PANEL = (320, 240)


def solid(path, colour, size=(320, 240)):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    Image.new("RGB", size, colour).save(path, quality=95)


class Player:
    """The release binary on a headless panel with a control socket, every presented frame in `frames`."""

    def __init__(self, work, name, library, sources, interval=0.3, stats=False):
        self.work = work
        self.socket = f"{work}/{name}.sock"
        self.log = f"{work}/{name}.log"
        self.frames = f"{work}/{name}-frames"
        shutil.rmtree(self.frames, ignore_errors=True)
        os.makedirs(self.frames)
        self.config = f"{work}/{name}.json"
        with open(self.config, "w") as f:
            json.dump({"library": library, "interval": interval, "transition": "none", "controlSocket": self.socket,
                       "positionFile": "", "headerCacheFolder": "", "renditionCacheFolder": "",
                       "display": {"backend": "headless", "headlessSize": f"{PANEL[0]}x{PANEL[1]}"},
                       "sources": sources}, f)
        env = {k: v for k, v in os.environ.items() if k not in ("STATE_DIRECTORY", "JOURNAL_STREAM")}
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            [VITRINE, "play", "--config", self.config, "--snapshots", self.frames] + (["--stats"] if stats else []),
            stdout=open(self.log, "w"), stderr=subprocess.STDOUT, env=env)
        harness.until(lambda: os.path.exists(self.socket), 10)

    def status(self):
        return json.loads(harness.ctl(self.socket, "status"))

    def source(self):
        try:
            return self.status()["sources"][0]
        except (OSError, ValueError, KeyError, IndexError):
            return {}

    def lines(self, text):
        with open(self.log, errors="replace") as f:
            return [line for line in f.read().splitlines() if text in line]

    def presented(self):
        return harness.presented(self.frames)

    def colour(self, seq):
        with Image.open(f"{self.frames}/{seq:06d}.ppm") as image:
            return image.convert("RGB").getpixel((PANEL[0] // 2, PANEL[1] // 2))

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=30)


def named(colour):
    """The photo whose colour this is (JPEG moves a channel by a few levels), or None."""
    for name, wanted in COLOURS.items():
        if all(abs(a - b) <= 12 for a, b in zip(colour, wanted)):
            return name
    return None


def player_plays_the_cache(work, apache):
    """A first start with no server and an empty cache, the server coming, changes on it, a restart offline."""
    data = f"{apache.data}/show"
    for name in "ABCD":
        solid(f"{data}/{name}.jpg", COLOURS[name])
    servers.open_to_server(data)
    library = f"{work}/player-library"
    os.makedirs(library)
    login = credentials(work, "player", apache.user, apache.password)
    sources = [{"kind": "webdav", "url": apache.url() + "show/", "credentialsFile": login, "category": "Show",
                "interval": 1, "timeout": 3}]
    apache.stop()
    player = Player(work, "player", library, sources)
    try:
        offline = harness.until(lambda: player.source().get("state") == "offline", 15)
        notice = harness.until(lambda: os.path.exists(f"{player.frames}/overlays.jsonl"), 10)
        bright = 0
        if notice:
            overlays = sorted(name for name in os.listdir(player.frames) if name.startswith("overlay-"))
            with Image.open(f"{player.frames}/{overlays[-1]}") as image:
                bright = sum(1 for pixel in image.convert("L").getdata() if pixel > 180)
        # Three tries at the 1 s interval: still one line.
        harness.until(lambda: player.source().get("failures", 0) >= 3, 15)
        said = player.lines("source Show: offline")
        record(offline and bright > 100 and len(said) == 1 and player.status()["count"] == 0,
               f"a first start with no server and an empty cache: the screen says so ({bright} bright pixels of "
               f"text over the background), status says offline, the log says it once over several tries "
               f"({said[0].split('vitrine: ')[-1][:120] if said else 'never'})")
        apache.start()
        synced = harness.until(lambda: player.status()["count"] == 4 and player.source().get("state") == "in sync",
                               20)
        harness.until(lambda: {named(player.colour(line["seq"])) for line in player.presented()} >= set("ABCD"),
                      10)
        seen = {named(player.colour(line["seq"])) for line in player.presented()}
        record(synced and seen >= set("ABCD"),
               f"the server back: the sync fetches the four photos and the player shows each ({sorted(seen - {None})})")

        fetched = player.source().get("photos_fetched", 0)
        solid(f"{data}/E.jpg", COLOURS["E"])
        os.remove(f"{data}/A.jpg")
        solid(f"{data}/.B-new.jpg", COLOURS["B2"])
        os.rename(f"{data}/.B-new.jpg", f"{data}/B.jpg")
        os.rename(f"{data}/C.jpg", f"{data}/C renamed.jpg")
        servers.open_to_server(data)
        changed = harness.until(lambda: player.source().get("photos_fetched", 0) >= fetched + 2
                                and player.source().get("state") == "in sync" and player.status()["count"] == 4, 20)
        mark = len(player.presented())
        harness.until(lambda: len(player.presented()) >= mark + 12, 15)
        after = [named(player.colour(line["seq"])) for line in player.presented()[mark:]]
        record(changed and set(after) == {"B2", "C", "D", "E"},
               f"adds, deletes, a replaced and a renamed photo on the server: the player shows exactly the new set "
               f"after the next sync ({sorted(set(after), key=str)}; {player.lines('source Show: 2 fetched')[-1:]})")
    finally:
        player.stop()
    apache.stop()
    again = Player(work, "restarted", library, sources)
    try:
        first = harness.until(lambda: again.presented(), 5)
        waited = time.monotonic() - again.started
        colours = {named(again.colour(line["seq"])) for line in again.presented()}
        harness.until(lambda: again.source().get("state") == "offline", 10)
        record(first and waited < 5 and colours <= {"B2", "C", "D", "E"} and again.source().get("state") == "offline",
               f"restarted with the server stopped: the cache plays at once (first photo {waited:.2f} s after "
               f"start), the source says offline")
    finally:
        again.stop()
    apache.start()


def children(pid):
    """The processes `pid` started, from any of its threads (the player starts its syncs from a worker's)."""
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(word) for word in f.read().split()]
    except OSError:
        pass
    return found


def shared_descriptors(parent, child):
    """What `child` has open that `parent` has open too, pipes aside (the report pipe is the one they share)."""
    def targets(pid):
        found = set()
        try:
            for name in os.listdir(f"/proc/{pid}/fd"):
                try:
                    found.add(os.readlink(f"/proc/{pid}/fd/{name}"))
                except OSError:
                    pass
        except OSError:
            pass
        return found
    standard = set()
    for number in (0, 1, 2):
        try:
            standard.add(os.readlink(f"/proc/{parent}/fd/{number}"))
        except OSError:
            pass
    # Standard error is the player's on purpose: the sync's own lines go to the journal with the player's.
    return sorted(target for target in targets(child) & targets(parent)
                  if not target.startswith("pipe:") and target not in standard and target != "/dev/null")


def gone(pid):
    """Whether the process has ended and been reaped (no zombie left)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "X"
    except OSError:
        return True


def reloaded_during_a_stall(player, proxy, data, library):
    """A reload that changes the sources while a sync hangs on a stalled photo: the loop does not wait for it, the
    old sync is stopped and reaped, the new sources sync."""
    make_photo(f"{data}/reload-0.jpg", 900, size=(800, 600))
    servers.open_to_server(data)
    proxy.mode = "stall"
    child = harness.until(lambda: children(player.process.pid), 30)
    harness.until(lambda: any(name.endswith(".vitrine-part") for name in os.listdir(f"{library}/Faults")), 10)
    with open(player.config) as f:
        config = json.load(f)
    config["sources"][0]["interval"] = 2
    with open(player.config, "w") as f:
        json.dump(config, f)
    alive = bool(child) and not gone(child[0])
    started = time.monotonic()
    answer = harness.ctl(player.socket, "reload")
    answered = time.monotonic() - started
    reaped = child and harness.until(lambda: gone(child[0]), 10)
    proxy.mode = "pass"
    synced = harness.until(lambda: os.path.exists(f"{library}/Faults/reload-0.jpg"), 30)
    record(alive and answer == "ok" and answered < 0.5 and reaped and synced,
           f"a reload that changes the sources while a photo hangs: answered in {answered * 1000:.0f} ms, the old "
           f"sync ({child[0] if child else '-'}) stopped and reaped, the new one fetches the photo")


def faults_through_a_proxy(work, apache):
    """A proxy in front of Apache stalls a photo midway, cuts one, answers 503 with Retry-After, while the player
    shows a slide every 0.2 s: no flip late by more than 20 ms past the next vblank of the player's own doing, status
    answered within 100 ms throughout, no part file ever played, each cut-off fetch resumed with a range request."""
    data = f"{apache.data}/faults"
    for index in range(6):
        make_photo(f"{data}/start-{index}.jpg", 600 + index, size=(800, 600))
    servers.open_to_server(data)
    proxy = servers.FaultProxy(apache.port, cut_at=20_000, retry_after=2)
    library = f"{work}/fault-library"
    os.makedirs(library)
    login = credentials(work, "faults", apache.user, apache.password)
    sources = [{"kind": "webdav", "url": f"http://127.0.0.1:{proxy.port}/dav/faults/", "credentialsFile": login,
                "category": "Faults", "interval": 1, "timeout": 2}]
    player = Player(work, "faults", library, sources, interval=0.2, stats=True)
    probe = harness.StallProbe()
    answers = []
    stop = threading.Event()

    def ask_status():
        while not stop.is_set():
            started = time.monotonic()
            try:
                player.status()
                answers.append(time.monotonic() - started)
            except (OSError, ValueError):
                answers.append(float("inf"))
            stop.wait(0.05)

    try:
        ready = harness.until(lambda: player.status()["count"] == 6 and player.lines("deadline-to-present"), 30)
        record(bool(ready), "the proxy passing: six photos synced and playing at 0.2 s")
        skip = len(player.lines("deadline-to-present"))
        poller = threading.Thread(target=ask_status, daemon=True)
        poller.start()
        for mode in ("stall", "cut", "busy"):
            names = [f"{mode}-{index}.jpg" for index in range(2)]
            for index, name in enumerate(names):
                make_photo(f"{data}/{name}", 700 + len(name) * 10 + index, size=(800, 600))
            servers.open_to_server(data)
            before = player.status()["count"]
            logged = len(proxy.log())
            proxy.mode = mode
            wanted = "busy" if mode == "busy" else "offline"
            if mode == "stall":
                # While the photo hangs, the sync's process holds nothing of the player's (a socket, the screen).
                child = harness.until(lambda: children(player.process.pid), 30)
                record(child and not shared_descriptors(player.process.pid, child[0]),
                       f"the sync's process ({child[0] if child else 'none seen'}) holds none of the player's "
                       f"descriptors but its report pipe ({shared_descriptors(player.process.pid, child[0]) if child else '-'})")
            failed = harness.until(lambda: player.source().get("state") == wanted, 30)
            parts = [name for name in os.listdir(f"{library}/Faults") if name.endswith(".vitrine-part")]
            if mode == "busy":
                harness.until(lambda: len([r for r in proxy.log()[logged:] if r[4] == "busy"]) >= 2, 15)
                busy = [r[0] for r in proxy.log()[logged:] if r[4] == "busy"]
                gap = busy[1] - busy[0] if len(busy) >= 2 else 0
                record(failed and gap >= 1.9,
                       f"busy: 503 with Retry-After: 2 makes the player say busy and wait {gap:.2f} s for the next try")
            else:
                record(failed and parts,
                       f"{mode}: the photo cut off midway is a hidden part file ({parts}), the source says offline")
            proxy.mode = "pass"
            back = harness.until(lambda: player.source().get("state") == "in sync"
                                 and player.status()["count"] == before + 2, 30)
            same = all(digest(f"{library}/Faults/{name}") == digest(f"{data}/{name}") for name in names
                       if os.path.exists(f"{library}/Faults/{name}"))
            ranged = [r for r in proxy.log()[logged:] if r[1] == "GET" and r[3] and r[4] == "pass"]
            record(back and same and (mode == "busy" or ranged),
                   f"{mode}: the proxy passing again, the photos arrive whole"
                   + ("" if mode == "busy" else f", the cut one resumed with {ranged[0][3] if ranged else 'no range'}"))
        stop.set()
        poller.join()
        time.sleep(0.05)  # the probe reports a window when it wakes from it
        reloaded_during_a_stall(player, proxy, data, library)
        lines = player.lines("deadline-to-present")[skip:]
        values = harness.lateness(lines, probe)
        own = max((late - held for late, held in values), default=None)
        vblank = 1000 / 60
        record(len(values) > 50 and own is not None and own - vblank <= 20,
               f"during the faults: {len(values)} slides at 0.2 s, the latest {own if own is not None else '-'} ms "
               f"after its deadline by the player's own doing (20 ms past the next vblank allowed)")
        slowest = max(answers, default=float("inf"))
        record(answers and slowest <= 0.1,
               f"status answered {len(answers)} times during the faults, the slowest in {slowest * 1000:.1f} ms")
        files = [line.get("file") or "" for line in player.presented()]
        record(files and not any(".vitrine-part" in name or "/." in name for name in files)
               and not player.lines("vitrine-part"),
               f"no part file was ever played ({len(files)} slides presented)")
    finally:
        stop.set()
        probe.stop()
        player.stop()
        proxy.stop()


class Hostile(http.server.BaseHTTPRequestHandler):
    """A WebDAV server that lies. `mode` says how; the good mode serves two photos."""
    mode = "good"
    port = 0
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def listing(self, entries):
        parts = ['<?xml version="1.0"?><D:multistatus xmlns:D="DAV:">']
        for href, folder, size in entries:
            kind = "<D:collection/>" if folder else ""
            length = "" if folder else f"<D:getcontentlength>{size}</D:getcontentlength>"
            parts.append(f"<D:response><D:href>{href}</D:href><D:propstat><D:prop><D:resourcetype>{kind}"
                         f"</D:resourcetype>{length}<D:getetag>\"{size}\"</D:getetag></D:prop>"
                         f"<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>")
        parts.append("</D:multistatus>")
        return "".join(parts).encode()

    def send(self, status, body, headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_PROPFIND(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        good = [("/dav/", True, 0), ("/dav/a.jpg", False, len(PHOTO)), ("/dav/b.jpg", False, len(PHOTO))]
        mode = Hostile.mode
        if mode == "good":
            return self.send(207, self.listing(good))
        if mode == "traversal":
            return self.send(207, self.listing(good + [("/dav/../../etc/passwd", False, 10)]))
        if mode == "escaped":
            return self.send(207, self.listing(good + [("/dav/..%2F..%2Fetc%2Fpasswd.jpg", False, 10)]))
        if mode == "dotdot":
            return self.send(207, self.listing(good + [("/dav/%2e%2e", True, 0)]))
        if mode == "other host":
            return self.send(207, self.listing(good + [("http://evil.example/dav/c.jpg", False, 10)]))
        if mode == "parent":
            if self.path == "/dav/":
                return self.send(207, self.listing(good + [("/dav/sub/", True, 0)]))
            return self.send(207, self.listing([("/dav/sub/", True, 0), ("/dav/", True, 0)]))
        if mode == "malformed":
            return self.send(207, self.listing(good)[:-30])
        if mode == "doctype":
            bomb = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
                    '<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>'
                    '<D:multistatus xmlns:D="DAV:"><D:response><D:href>/dav/&lol2;.jpg</D:href></D:response>'
                    '</D:multistatus>')
            return self.send(207, bomb.encode())
        if mode == "endless":
            self.send_response(207)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = self.listing(good)[:-len("</D:multistatus>")]
            entry = chunk[chunk.index(b"<D:response>", 60):]
            try:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                block = entry * 2000
                for _ in range(100_000):  # far past any limit: 1 GB and more
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(block), block))
            except OSError:
                pass
            self.close_connection = True
            return None
        if mode == "redirect":
            return self.send(302, b"", [("Location", f"http://127.0.0.1:{Hostile.port}{self.path}")])
        if mode == "larger":
            return self.send(207, self.listing(good + [("/dav/big.jpg", False, 100)]))
        return self.send(500, b"")

    def do_GET(self):
        if self.path == "/dav/big.jpg":
            return self.send(200, PHOTO * 4)
        return self.send(200, PHOTO)


PHOTO = b""


class QuietServer(http.server.ThreadingHTTPServer):
    """A client that hangs up on an endless answer is what the test wants, not a traceback."""
    def handle_error(self, request, client_address):
        pass


def hostile_answers(work):
    global PHOTO
    make_photo(f"{work}/hostile-photo.jpg", 12)
    with open(f"{work}/hostile-photo.jpg", "rb") as f:
        PHOTO = f.read()
    server = QuietServer(("127.0.0.1", 0), Hostile)
    Hostile.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        sandbox = f"{work}/hostile"
        library = f"{sandbox}/deep/library"
        os.makedirs(library)
        config = write_config(sandbox, [{"kind": "webdav", "url": f"http://127.0.0.1:{Hostile.port}/dav/",
                                         "category": "Hostile", "timeout": 10}], library=library)
        Hostile.mode = "good"
        good = sync(config)
        cache = photos_under(library)
        record(good.returncode == 0 and sorted(cache) == ["Hostile/a.jpg", "Hostile/b.jpg"],
               f"the lying server's honest answer: two photos ({say(good)})")
        outside_before = photos_under(sandbox)
        cases = [("traversal", "below the folder listed"), ("escaped", "has a / in its name"),
                 ("dotdot", "is named .."), ("other host", "another server"), ("parent", "outside the folder"),
                 ("malformed", "not well-formed XML"), ("doctype", "document type declaration"),
                 ("endless", "more than"), ("redirect", "redirects in a loop")]
        for mode, reason in cases:
            Hostile.mode = mode
            result = sync(config, timeout=120)
            lines = [line for line in result.stderr.splitlines() if line.strip()]
            record(result.returncode == 1 and len(lines) == 1 and "bad answer" in lines[0] and reason in lines[0]
                   and photos_under(sandbox) == outside_before and not hidden_files(library),
                   f"{mode}: refused in one line, nothing written, the cache as it was ({say(result)[:200]})")
        record(not os.path.exists(f"{sandbox}/etc") and not os.path.exists(f"{sandbox}/deep/etc"),
               "nothing was written outside the library")
        Hostile.mode = "larger"
        larger = sync(config)
        record("big.jpg" in larger.stdout and "larger than the 100 bytes its listing said" in larger.stdout
               and not os.path.exists(f"{library}/Hostile/big.jpg") and not hidden_files(library),
               f"a file larger than its listing said is refused and its part deleted ({say(larger)[-200:]})")
    finally:
        server.shutdown()


def main():
    global VITRINE
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vitrine", default=os.path.join(HERE, "..", "..", ".build/release/vitrine"))
    args = parser.parse_args()
    VITRINE = os.path.abspath(args.vitrine)
    for tool in ("apache2", "htpasswd", "rclone", "smbd", "pdbedit", "smbclient", "openssl"):
        if not shutil.which(tool):
            record(False, f"{tool} is not installed (make sync-test installs apache2, apache2-utils, rclone, samba, "
                   "smbclient, openssl)")
            return 1
    work = tempfile.mkdtemp(prefix="vitrine-sync-")
    started = []
    try:
        apache = servers.Apache(work)
        started.append(apache)
        apache.start()
        first = apache_cycle(work, apache)
        megabytes = sum(os.path.getsize(os.path.join(root, name)) for root, _, files in os.walk(apache.data)
                        for name in files) / 1e6
        print(f"      first sync: 200 photos, {megabytes:.1f} MB, {first.seconds:.2f} s")
        # The cycle ends with the server stopped.
        apache.start()
        renditions_in_the_cache(work, apache)
        player_plays_the_cache(work, apache)
        faults_through_a_proxy(work, apache)
        rclone = servers.Rclone(work)
        started.append(rclone)
        rclone.start()
        rclone_cycle(work, rclone)
        samba = servers.Samba(work)
        started.append(samba)
        samba.start()
        samba_cycle(work, samba)
        hostile_answers(work)
    finally:
        for server in started:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    sys.exit(main())

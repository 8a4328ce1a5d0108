#!/usr/bin/python3
"""Power cuts, 50 of them: the player's state and library on a disk of their own in a VM (Debian's kernel under
QEMU, ext4), the frame busy at once with everything that writes there, the power cut, and the disk looked at as
it would be at 50 moments of that run.

How: the disk is a virtio-blk device behind QEMU's `blklogwrites` driver, which logs every write the guest sends
to it, in order, with its flushes (dm-log-writes' format). In the guest `vitrine play` runs with the web remote,
slides change every half second (the position saved at each: positionSaveInterval 1), photos are uploaded through
the web remote one after another, `vitrine sync --once` mirrors a WebDAV share (rclone in the guest) into the
library and `vitrine renditions` writes renditions beside the photos, all at once, until QEMU is killed at a
random moment (the real cut). Then, on the host, the disk as it was before the run is brought to 49 other random
points of the log by replaying the writes up to there (a power cut at that moment, with everything after it
lost), and each of the 50 disks is mounted (ext4 replays its journal) and checked:

- ext4 is consistent (`e2fsck -fn`);
- no half photo in the library: every photo there (the run's uploads, syncs and renditions too) decodes whole
  with Pillow; hidden part files may be left (the player and the syncs clear them);
- no photo lost: each photo the disk started with is there, byte for byte, and so is each upload whose answer
  (201) the test had written down on the disk (a mark, fsynced, after the answer);
- no corrupt state: the position, the stars and the web token, where there is one, read as what they are;
- the player comes back: `vitrine play` on that disk starts, and its first slide is the one the saved position
  names (or, without one, the first of its category).

Needs root on the host (a loop mount per disk). Prints PASS/FAIL per check and `N passed, M failed`.
Usage: test_powercut.py [--vitrine PATH] [--cuts N] [--seed N]
"""
import argparse
import hashlib
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "Tests", "VM"))
sys.path.insert(0, os.path.join(REPO, "Tests"))
import vm as vmlib  # noqa: E402
import harness  # noqa: E402
from harness import record, summary  # noqa: E402

from PIL import Image  # noqa: E402

DISK_MIB = 96
SECTOR = 512
MAGIC = 0x6A736677736872
FLUSH, FUA, DISCARD, MARK = 1, 2, 4, 8

# Runs in the guest as root: the frame, and everything that writes to its disk at once.
GUEST = r"""
import http.client, json, os, socket, subprocess, sys, time
vitrine, seconds, disk = sys.argv[1], float(sys.argv[2]), sys.argv[3]
# The agent's guest has no network of its own: loopback is enough for the web remote and the WebDAV server.
subprocess.run(["ip", "link", "set", "lo", "up"], check=False)
os.makedirs("/run/vitrine", exist_ok=True)
env = dict(os.environ, STATE_DIRECTORY=f"{disk}/state", RUNTIME_DIRECTORY="/run/vitrine", HOME="/root")
rclone = subprocess.Popen(["rclone", "serve", "webdav", "/share/remote", "--addr", "127.0.0.1:8081",
                           "--dir-cache-time", "0s"], env=dict(env, RCLONE_CONFIG="/dev/null"),
                          stdout=subprocess.DEVNULL, stderr=open("/share/rclone.log", "w"))
player = subprocess.Popen([vitrine, "play", "--config", "/share/cut.json"], env=env,
                          stdout=open("/share/player.log", "w"), stderr=subprocess.STDOUT)
token = None
for _ in range(600):
    try:
        token = open(f"{disk}/state/web-token").read().strip()
        break
    except OSError:
        time.sleep(0.1)
for _ in range(300):
    try:
        socket.create_connection(("127.0.0.1", 8081), timeout=1).close()
        break
    except OSError:
        time.sleep(0.1)
log = open("/share/uploads.log", "w")

def mark(name, text):
    os.makedirs(f"{disk}/marks", exist_ok=True)
    path = f"{disk}/marks/{name}"
    with open(path + ".tmp", "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.rename(path + ".tmp", path)
    folder = os.open(f"{disk}/marks", os.O_RDONLY)
    os.fsync(folder)
    os.close(folder)

# The player syncs its source itself (the first sync at start); the renditions run beside it.
busy = [subprocess.Popen([vitrine, "renditions", "--config", "/share/cut.json", "--jobs", "1",
                          "--profiles", "rpi-touch-display"], env=env,
                         stdout=open("/share/renditions.log", "w"), stderr=subprocess.STDOUT)]
uploads = sorted(os.listdir("/share/uploads"))
end = time.monotonic() + seconds
n = 0
while time.monotonic() < end:
    subprocess.run([vitrine, "ctl", "--control", "/run/vitrine/cut.sock", "next"], stdout=subprocess.DEVNULL)
    name = uploads[n % len(uploads)]
    body = open(f"/share/uploads/{name}", "rb").read()
    target = f"up{n:03d}-{name}"
    try:
        connection = http.client.HTTPConnection("127.0.0.1", 8080, timeout=20)
        connection.request("POST", f"/api/photos?category=Uploads&name={target}", body=body,
                           headers={"Authorization": f"Bearer {token}", "Content-Type": "image/jpeg"})
        answer = connection.getresponse()
        data = answer.read()
        print(answer.status, data[:200], file=log, flush=True)
        if answer.status == 201:
            saved = json.loads(data)["name"]
            mark(f"upload-{n:03d}", f"Uploads/{saved} {name}\n")
    except OSError as error:
        print("upload:", error, file=log, flush=True)
    n += 1
    time.sleep(0.2)
print("activity over", flush=True)
time.sleep(3600)
"""


def make_disk(work, photos):
    """The disk as the frame has it before the run: ext4 with the library (two categories) and an empty state
    folder, made with mkfs.ext4 -d (no mount). Returns the base image and the library's photos' digests."""
    tree = f"{work}/tree"
    os.makedirs(f"{tree}/state")
    os.makedirs(f"{tree}/library/Uploads")
    digests = {}
    for index, (category, colour) in enumerate(photos):
        folder = f"{tree}/library/{category}"
        os.makedirs(folder, exist_ok=True)
        path = f"{folder}/{index:02d}.jpg"
        detailed(colour, index).save(path, quality=90)
        digests[f"{category}/{index:02d}.jpg"] = digest(path)
    base = f"{work}/base.img"
    with open(base, "wb") as f:
        f.truncate(DISK_MIB << 20)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-d", tree, base], check=True)
    return base, digests


def detailed(colour, seed, size=(1600, 1200)):
    """A photo with detail everywhere, so it is hundreds of KiB like a phone's and takes many writes."""
    noise = Image.effect_noise((size[0] // 8, size[1] // 8), 60 + seed).convert("RGB").resize(size)
    return Image.blend(Image.new("RGB", size, colour), noise, 0.35)


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def read_log(path):
    """The entries of a blklogwrites log: (sector, sectors, flags, offset of the data in the log). Entries past
    the super block's count (written after its last flush, before the cut) are read while they look whole."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < SECTOR:
        return [], data
    magic, version, _count, sectorsize = struct.unpack_from("<QQQI", data, 0)
    if magic != MAGIC or version != 1 or sectorsize != SECTOR:
        raise ValueError(f"{path}: not a dm-log-writes log (magic {magic:#x}, sector size {sectorsize})")
    entries = []
    offset = SECTOR
    while offset + SECTOR <= len(data):
        sector, sectors, flags, _length = struct.unpack_from("<QQQQ", data, offset)
        if flags & ~(FLUSH | FUA | DISCARD | MARK) or (sectors == 0 and not flags & (FLUSH | MARK)):
            break
        payload = offset + SECTOR
        size = 0 if flags & DISCARD else sectors * SECTOR
        if payload + size > len(data):
            break
        entries.append((sector, sectors, flags, payload))
        offset = payload + size
    return entries, data


def apply(image, entries, data, start, end):
    """Writes entries [start, end) of the log onto the open image: a power cut after entry `end - 1`."""
    for sector, sectors, flags, payload in entries[start:end]:
        if flags & DISCARD:
            image.seek(sector * SECTOR)
            image.write(bytes(sectors * SECTOR))
        elif sectors:
            image.seek(sector * SECTOR)
            image.write(data[payload:payload + sectors * SECTOR])


def check_disk(cut, image, work, vitrine, base_digests, label):
    """Mounts one disk as the cut left it and checks it; returns the failures, in words."""
    problems = []
    mount = f"{work}/mnt"
    mounted = subprocess.run(["mount", "-o", "loop", image, mount], capture_output=True, text=True)
    if mounted.returncode != 0:
        return [f"does not mount: {mounted.stderr.strip()}"]
    try:
        library = f"{mount}/library"
        # No half photo: everything under a photo's name decodes whole.
        whole = 0
        for folder, folders, names in os.walk(library):
            # Hidden folders and files are not photos of the show: .hidden, .trash, part files, the syncs' lists.
            folders[:] = [name for name in folders if not name.startswith(".")]
            for name in names:
                if name.startswith("."):
                    continue
                path = f"{folder}/{name}"
                try:
                    with Image.open(path) as photo:
                        photo.load()
                    whole += 1
                except Exception as error:  # noqa: BLE001  (Pillow raises several kinds)
                    problems.append(f"half photo {os.path.relpath(path, mount)} ({os.path.getsize(path)} bytes): "
                                    f"{error}")
        # No photo lost: the disk's own, and each upload the test saw acknowledged.
        for relative, expected in base_digests.items():
            path = f"{library}/{relative}"
            if not os.path.exists(path) or digest(path) != expected:
                problems.append(f"{relative} lost or changed")
        marks = sorted(os.listdir(f"{mount}/marks")) if os.path.isdir(f"{mount}/marks") else []
        for name in marks:
            if name.endswith(".tmp"):
                continue
            saved, original = open(f"{mount}/marks/{name}").read().split()
            path = f"{library}/{saved}"
            if not os.path.exists(path) or digest(path) != digest(f"{work}/share/uploads/{original}"):
                problems.append(f"acknowledged upload {saved} lost or changed")
        # No corrupt state.
        state = f"{mount}/state"
        position = None
        if os.path.exists(f"{state}/position.json"):
            try:
                position = json.load(open(f"{state}/position.json"))
                if not {"library", "category", "slide"} <= set(position):
                    problems.append(f"position.json lacks its keys: {position}")
            except ValueError as error:
                problems.append(f"position.json is not JSON ({os.path.getsize(f'{state}/position.json')} bytes): "
                                f"{error}")
        if os.path.exists(f"{state}/web-token"):
            token = open(f"{state}/web-token").read().strip()
            if not re.fullmatch(r"[0-9a-f]{64}", token):
                problems.append(f"web-token is not a token: {token[:80]!r}")
        # The player comes back, at the saved slide.
        config = f"{work}/check.json"
        with open(config, "w") as f:
            json.dump({"library": library, "display": {"backend": "headless", "headlessSize": "320x240"},
                       "transition": "none", "controlSocket": f"{work}/check.sock",
                       "renditionCacheFolder": "", "headerCacheFolder": ""}, f)
        frames = f"{work}/frames"
        shutil.rmtree(frames, ignore_errors=True)
        started = subprocess.run(
            [vitrine, "play", "--config", config, "--exit-after", "1", "--snapshots", frames],
            env=dict(os.environ, STATE_DIRECTORY=state), capture_output=True, text=True, timeout=60)
        first = {}
        try:
            first = json.loads(open(f"{frames}/presented.jsonl").readline())
        except (OSError, ValueError):
            pass
        if started.returncode != 0 or not first:
            problems.append(f"the player did not come back (exit {started.returncode}): {started.stdout[-300:]}")
        elif position and os.path.exists(f"{library}/{position['category']}"):
            slide = position["slide"]
            if any(n.startswith(slide + ".") for n in os.listdir(f"{library}/{position['category']}")) and (
                    first.get("category"), first.get("slide")) != (position["category"], slide):
                problems.append(f"came back at {first.get('category')}/{first.get('slide')}, not at the saved "
                                f"{position['category']}/{slide}")
        nas = f"{library}/NAS"
        label.update(synced=len([n for n in os.listdir(nas) if not n.startswith(".")]) if os.path.isdir(nas) else 0)
        label.update(photos=whole, uploads=len([m for m in marks if not m.endswith(".tmp")]),
                     position=f"{position['category']}/{position['slide']}" if position else None)
    finally:
        subprocess.run(["umount", mount], check=False)
    fsck = subprocess.run(["e2fsck", "-fn", image], capture_output=True, text=True)
    if fsck.returncode != 0:
        problems.append(f"e2fsck: {fsck.stdout.strip().splitlines()[-1:]}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vitrine", default=os.path.join(REPO, ".build", "release", "vitrine"))
    parser.add_argument("--cuts", type=int, default=50)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    args = parser.parse_args()
    vitrine = os.path.abspath(args.vitrine)
    if os.geteuid() != 0:
        record(False, "test_powercut.py needs root (a loop mount for each disk)")
        return summary()
    ok, reason = vmlib.check()
    if not ok:
        return vmlib.skipped("power-cut test", reason)
    if not shutil.which("rclone"):
        record(False, "rclone is missing (make sync-deps installs it)")
        return summary()
    rng = random.Random(args.seed)
    print(f"seed {args.seed} (--seed {args.seed} runs these cuts again)")
    work = tempfile.mkdtemp(prefix="vitrine-powercut-")
    try:
        share = f"{work}/share"
        for folder in ("remote/2024", "uploads"):
            os.makedirs(f"{share}/{folder}")
        for index in range(8):
            detailed((200, 120 + index * 10, 40), 100 + index).save(f"{share}/remote/2024/nas{index}.jpg", quality=90)
        for index in range(4):
            detailed((40, 90 + index * 30, 200), 200 + index).save(f"{share}/uploads/phone{index}.jpg", quality=92)
        base, digests = make_disk(work, [("Garden", (40, 160, 60))] * 6 + [("Beach", (230, 200, 120))] * 6)
        disk = f"{work}/disk.img"
        shutil.copy(base, disk)
        log = f"{work}/writes.log"
        open(log, "wb").close()
        # The guest mounts its disk where the host mounts each cut's disk, so the saved position's library (a path)
        # is the same on both sides.
        mount = f"{work}/mnt"
        os.makedirs(mount)
        with open(f"{share}/cut.json", "w") as f:
            json.dump({"library": f"{mount}/library", "interval": 0.5, "transition": "none", "positionSaveInterval": 1,
                       "display": {"backend": "headless", "headlessSize": "320x240"},
                       "controlSocket": "/run/vitrine/cut.sock", "startCategory": "Garden",
                       "web": {"address": "127.0.0.1", "port": 8080, "pages": f"{REPO}/web",
                               "freeSpaceFloorMiB": 8},
                       "sources": [{"kind": "webdav", "url": "http://127.0.0.1:8081/", "category": "NAS"}]}, f)
        with open(f"{share}/guest.py", "w") as f:
            f.write(GUEST)
        drive = [
            "-blockdev", f"driver=file,node-name=disk,filename={disk}",
            "-blockdev", f"driver=file,node-name=log,filename={log}",
            "-blockdev", "driver=blklogwrites,node-name=logged,file=disk,log=log,log-sector-size=512",
            "-device", "virtio-blk-pci,drive=logged",
        ]
        busy_seconds = rng.uniform(6, 16)
        with vmlib.VM(device="bochs", share=share, cpus=1, memory_mb=768, extra=drive) as vm:
            rc, out = vm.run(f"mkdir -p {mount} && mount /dev/vda {mount} && ls {mount}/library", timeout=60)
            record(rc == 0 and "Garden" in out, f"the guest mounts its disk, behind QEMU's write log ({out.split()})")
            vm.spawn("busy", f"exec /usr/bin/python3 /share/guest.py {vitrine} 120 {mount}")
            # The cut comes a random while after the uploads have begun (by then the sync and renditions run too).
            harness.until(lambda: os.path.exists(f"{share}/uploads.log")
                          and len(open(f"{share}/uploads.log").read().splitlines()) >= 2, 180)
            time.sleep(busy_seconds)
            vm.kill()
        entries, data = read_log(log)
        activity = {name: open(f"{share}/{name}.log", errors="replace").read()[-300:]
                    for name in ("player", "renditions", "uploads") if os.path.exists(f"{share}/{name}.log")}
        record(len(entries) > 200, f"the power was cut {busy_seconds:.1f} s into the busy run: {len(entries)} writes "
                                    f"and flushes logged ({sum(1 for e in entries if e[2] & FLUSH)} flushes)")
        if len(entries) < args.cuts:
            return summary()
        cuts = sorted(set(rng.sample(range(1, len(entries)), min(args.cuts - 1, len(entries) - 1))
                          + [len(entries)]))
        working = f"{work}/working.img"
        shutil.copy(base, working)
        done = 0
        failures = 0
        seen = {"photos": set(), "uploads": set(), "positions": set()}
        with open(working, "r+b") as image:
            for cut in cuts:
                apply(image, entries, data, done, cut)
                done = cut
                image.flush()
                cut_image = f"{work}/cut.img"
                shutil.copy(working, cut_image)
                label = {}
                problems = check_disk(cut, cut_image, work, vitrine, digests, label)
                seen["photos"].add(label.get("photos"))
                seen["uploads"].add(label.get("uploads"))
                seen["positions"].add(label.get("position"))
                seen["synced"] = max(seen.get("synced", 0), label.get("synced", 0))
                real = " (the real cut)" if cut == len(entries) else ""
                if problems:
                    failures += 1
                    record(False, f"cut after write {cut} of {len(entries)}{real}: {'; '.join(problems[:4])}")
        record(failures == 0,
               f"{len(cuts)} power cuts (seed {args.seed}): the disk is consistent, no half photo, no photo lost, no "
               f"corrupt state, and the player comes back at its saved slide every time (photos on the disks "
               f"{min(p for p in seen['photos'] if p is not None) if any(seen['photos']) else 0} to "
               f"{max(p for p in seen['photos'] if p is not None) if any(seen['photos']) else 0}, acknowledged "
               f"uploads 0 to {max(u for u in seen['uploads'] if u is not None) if any(seen['uploads']) else 0}, "
               f"{len(seen['positions'])} different saved positions)")
        uploads = max((u for u in seen["uploads"] if u is not None), default=0)
        synced = seen.get("synced", 0)
        record(uploads >= 3 and len(seen["positions"]) >= 5 and synced >= 1,
               f"the cuts fell while the frame was busy: {uploads} uploads acknowledged by the last one, "
               f"{len(seen['positions'])} saved positions seen, {synced} photos synced by the last")
    finally:
        if not os.environ.get("VITRINE_VM_KEEP"):
            shutil.rmtree(work, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""What a day of play writes to the SD card: `vitrine play` with the default settings (a 10 s interval, the
position saved at most once every half hour) on a headless panel, its state folder on an ext4 file system of its own (a
loop device), its runtime folder and library in memory, as the service has them on a board.

The figure is ext4's own count of what it sent to the device (`lifetime_write_kbytes`: the player's files with
their metadata and the journal's commits), read after a `sync` at the first slide and after SECONDS of play, and
scaled to a day, plus the day's position saves at what one costs (measured with a save at every slide); beside it
what the player wrote to its log (the journal's intake, which journald keeps on the card where its storage is
persistent). Issue 38's target: under 1 MiB a day with the default settings. The reference, measured in the same
run on the same file system, is a bare save of a file of the position's size (write, fsync, rename, fsync of the
folder).

Needs root (mkfs.ext4, a loop mount). Usage: writes.py [--vitrine PATH] [--seconds N]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "Tests"))
import harness  # noqa: E402

DAY = 86400
TARGET_KIB = 1024


class Ext4:
    """A 64 MiB ext4 image mounted through a loop device, with the device's write counter."""

    def __init__(self, folder):
        self.image = f"{folder}/state.img"
        self.mount = f"{folder}/state"
        with open(self.image, "wb") as f:
            f.truncate(64 << 20)
        subprocess.run(["mkfs.ext4", "-q", "-F", self.image], check=True)
        os.makedirs(self.mount)
        self.device = subprocess.run(["losetup", "--find", "--show", self.image], check=True, capture_output=True,
                                     text=True).stdout.strip()
        subprocess.run(["mount", self.device, self.mount], check=True)
        self.counter = f"/sys/fs/ext4/{os.path.basename(self.device)}/lifetime_write_kbytes"

    def written_kib(self):
        subprocess.run(["sync", "-f", self.mount], check=True)
        with open(self.counter) as f:
            return int(f.read())

    def close(self):
        subprocess.run(["umount", self.mount], check=False)
        subprocess.run(["losetup", "-d", self.device], check=False)


def make_library(root):
    from PIL import Image
    for category in ("Garden", "Beach"):
        os.makedirs(f"{root}/{category}")
        for n in range(12):
            Image.new("RGB", (1024, 768), (20 * n, 100, 200 - 10 * n)).save(f"{root}/{category}/{n:02d}.jpg")


def reference(fs, saves, _pause):
    """KiB a bare save of a 300-byte file costs: write, fsync, rename, fsync the folder."""
    before = fs.written_kib()
    folder = f"{fs.mount}/reference"
    os.makedirs(folder, exist_ok=True)
    for n in range(saves):
        with open(f"{folder}/position.json.tmp", "w") as f:
            f.write(json.dumps({"slide": n, "pad": "x" * 260}))
            f.flush()
            os.fsync(f.fileno())
        os.rename(f"{folder}/position.json.tmp", f"{folder}/position.json")
        descriptor = os.open(folder, os.O_RDONLY)
        os.fsync(descriptor)
        os.close(descriptor)
        # Apart as the player's are, so each is its own journal commit.
        time.sleep(0.05)
    return (fs.written_kib() - before) / max(saves, 1)


def play(vitrine, fs, memory, name, seconds, extra=None):
    """`vitrine play` for `seconds` after its first slide: (KiB ext4 sent to the card, seconds, slides, log
    bytes, the state folder's files)."""
    state = f"{fs.mount}/{name}"
    os.makedirs(state)
    runtime = f"{memory}/{name}-run"
    os.makedirs(runtime)
    socket = f"{runtime}/vitrine.sock"
    config = {"library": f"{memory}/library", "controlSocket": socket, "display": {"backend": "headless"}}
    config.update(extra or {})
    with open(f"{memory}/{name}.json", "w") as f:
        json.dump(config, f)
    env = dict(os.environ, STATE_DIRECTORY=state, RUNTIME_DIRECTORY=runtime)
    log_path = f"{memory}/{name}.log"
    player = subprocess.Popen([vitrine, "play", "--config", f"{memory}/{name}.json"], stdout=open(log_path, "w"),
                              stderr=subprocess.STDOUT, env=env)

    def presented():
        try:
            return json.loads(harness.ctl(socket, "status")).get("presented", 0)
        except (OSError, ValueError):
            return 0
    try:
        if not harness.until(lambda: presented() >= 1, 30):
            sys.exit(f"writes.py: no first slide; the log:\n{open(log_path).read()[-2000:]}")
        # The start's own writes (the header cache of a new library, the first position) are not the day's.
        time.sleep(2)
        start_kib = fs.written_kib()
        start_log = os.path.getsize(log_path)
        start_slides = presented()
        started = time.monotonic()
        time.sleep(seconds)
        elapsed = time.monotonic() - started
        kib = fs.written_kib() - start_kib
        return kib, elapsed, presented() - start_slides, os.path.getsize(log_path) - start_log, sorted(os.listdir(state))
    finally:
        player.terminate()
        player.wait(timeout=20)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vitrine", default=os.path.join(ROOT, ".build", "release", "vitrine"))
    parser.add_argument("--seconds", type=float, default=300)
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("writes.py: needs root (mkfs.ext4 and a loop mount)")
    work = tempfile.mkdtemp(prefix="vitrine-writes-")
    memory = tempfile.mkdtemp(prefix="vitrine-writes-", dir="/dev/shm")
    fs = Ext4(work)
    try:
        make_library(f"{memory}/library")
        # The day as the defaults play it: between two position saves (half an hour apart) nothing else should
        # reach the card.
        kib, elapsed, slides, log_bytes, files = play(args.vitrine, fs, memory, "default", args.seconds)
        # A save's own cost: the same show saving at every slide.
        every = 10
        save_seconds = min(args.seconds, 120)
        saving_kib, saving_elapsed, saves, _, _ = play(
            args.vitrine, fs, memory, "saving", save_seconds, {"positionSaveInterval": every})
        per_save = max(0.0, saving_kib - kib * saving_elapsed / elapsed) / max(saves, 1)
        saves_a_day = DAY / 1800
        per_day = kib * DAY / elapsed + saves_a_day * per_save
        naive = reference(fs, 60, 1)
        print(f"writes: {slides} slides in {elapsed:.0f} s of play with the default settings; the state folder on "
              f"ext4 holds {', '.join(files)}")
        print(f"writes: between position saves: {kib} KiB in {elapsed:.0f} s = {kib * DAY / elapsed:.0f} KiB a day")
        print(f"writes: a position save: {per_save:.1f} KiB ({saves} saves in {saving_elapsed:.0f} s at one a slide), "
              f"the same as a bare write, fsync, rename, fsync of the folder of 300 bytes ({naive:.1f} KiB, the "
              f"reference): {per_save / naive if naive else float('nan'):.2f} of it")
        print(f"writes: a day of play: {per_day:.0f} KiB to the card ({saves_a_day:.0f} saves of the position, one "
              f"each positionSaveInterval of 1800 s) - target under {TARGET_KIB} KiB: "
              f"{'PASS' if per_day < TARGET_KIB else 'FAIL'}")
        print(f"writes: the log: {log_bytes} bytes in {elapsed:.0f} s = {log_bytes * DAY / elapsed / 1024:.0f} KiB "
              f"a day (to the journal)")
        return 0 if per_day < TARGET_KIB else 1
    finally:
        fs.close()
        subprocess.run(["rm", "-rf", work, memory], check=False)


if __name__ == "__main__":
    sys.exit(main())

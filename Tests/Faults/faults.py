#!/usr/bin/python3
"""What kiosks live through, against the release binary on a headless panel (presented frames as snapshots):

1. the library synced over by rsync while it plays (rsync's hidden temporary files, files replaced, added and
   deleted), with and without --delay-updates;
2. the library folder replaced by a directory rename (a new tree built beside it and renamed into place), and by
   a `current` symlink flipped to a new tree;
3. the player killed with SIGKILL and started again: it resumes at the slide it was showing (position.json);
4. the disk full while the position is saved: the saved position is kept whole, the show goes on, and saving
   resumes when there is room again;
5. a library on a share that stops answering for VITRINE_STALL_SECONDS (default 60; a FUSE passthrough that is
   frozen, Tests/Faults/freezable_fs.py): `status` answers within 100 ms every time while a category switch, a
   web listing and an upload are asked, and after it the show moves on, the listing and the upload are answered;
6. the library folder replaced, during such a stall, by a link into the share: `status` answers throughout (the
   player follows the library to its new folder off its thread), and the new library plays after the stall;
7. a clip playing from such a share when it stops answering (its thread waits in a read): `status` answers within
   100 ms throughout, `next` leaves the clip, and after the stall the show goes on and the player stops cleanly.

Prints PASS/FAIL per check and `N passed, M failed`. Usage: faults.py --vitrine BIN
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402  (Tests/harness.py)
from harness import ctl, record, summary, until  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PANEL = (160, 96)
COLORS = {"red": (230, 20, 20), "green": (20, 200, 40), "blue": (20, 40, 220), "yellow": (240, 220, 20),
          "cyan": (20, 210, 220), "magenta": (220, 30, 200), "white": (245, 245, 245), "orange": (250, 140, 20)}


def photo(path, color):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    Image.new("RGB", PANEL, COLORS[color]).save(path, quality=95)


class Player:
    def __init__(self, vitrine, work, name, library, interval, extra=None, env=None):
        self.work = work
        self.frames = f"{work}/{name}-frames"
        self.socket = f"{work}/{name}.sock"
        self.log = f"{work}/{name}.log"
        config = {"library": library, "deviceTable": f"{REPO}/Config/devices.json", "interval": interval,
                  "transition": "none", "controlSocket": self.socket,
                  "display": {"backend": "headless", "headlessSize": f"{PANEL[0]}x{PANEL[1]}"}}
        config.update(extra or {})
        with open(f"{work}/{name}.json", "w") as f:
            json.dump(config, f)
        shutil.rmtree(self.frames, ignore_errors=True)
        self.process = subprocess.Popen(
            [vitrine, "play", "--config", f"{work}/{name}.json", "--snapshots", self.frames],
            stdout=open(self.log, "w"), stderr=subprocess.STDOUT,
            env={**{k: v for k, v in os.environ.items() if k != "STATE_DIRECTORY"}, **(env or {})})

    def presented(self):
        return harness.presented(self.frames)

    def color(self, index):
        """The colour name of presented frame `index` (1-based), from its snapshot's centre pixel."""
        image = Image.open(f"{self.frames}/{index:06d}.ppm").convert("RGB")
        pixel = image.getpixel((PANEL[0] // 2, PANEL[1] // 2))
        return min(COLORS, key=lambda name: sum((a - b) ** 2 for a, b in zip(COLORS[name], pixel)))

    def ctl(self, command):
        return ctl(self.socket, command)

    def wait(self, condition, timeout=20):
        return until(condition, timeout)

    def output(self):
        with open(self.log, errors="replace") as f:
            return f.read()

    def stop(self, sig=signal.SIGTERM):
        self.process.send_signal(sig)
        return self.process.wait(timeout=20)


def shown_since(player, start):
    """(slide name, colour) of every frame presented after the first `start` ones."""
    records = player.presented()
    return [(r["slide"], player.color(i + 1)) for i, r in enumerate(records) if i >= start]


def rsync_over(vitrine, work, delay_updates):
    label = "rsync --delay-updates" if delay_updates else "rsync"
    library = f"{work}/lib-{'delay' if delay_updates else 'plain'}"
    source = f"{work}/src-{'delay' if delay_updates else 'plain'}"
    for name, color in [("a", "red"), ("b", "green"), ("c", "blue"), ("d", "yellow"), ("e", "white")]:
        photo(f"{library}/Trips/{name}.jpg", color)
    # The new state: c and d replaced by other pictures, f and g new, a, b and e deleted.
    for name, color in [("c", "cyan"), ("d", "magenta"), ("f", "orange"), ("g", "red")]:
        photo(f"{source}/Trips/{name}.jpg", color)
    # Big files, so rsync's temporary files exist long enough to be seen.
    Image.effect_noise((3000, 2000), 80).convert("RGB").save(f"{source}/Trips/h.jpg", quality=98)
    player = Player(vitrine, work, os.path.basename(library), library, 0.15)
    player.wait(lambda: len(player.presented()) >= 3)
    start = len(player.presented())
    command = ["rsync", "-a", "--delete"] + (["--delay-updates"] if delay_updates else []) + \
              [f"{source}/", f"{library}/"]
    done = subprocess.run(command, capture_output=True, text=True)
    record(done.returncode == 0, f"{label}: the sync ran ({done.stderr.strip()[:100]})")
    player.wait(lambda: {"c", "d", "f", "g", "h"} <= {s for s, _ in shown_since(player, start)}, 30)
    after = shown_since(player, start)
    time.sleep(1)
    after = shown_since(player, start)
    settled = after[len(after) // 2:]
    wanted = {"c": "cyan", "d": "magenta", "f": "orange", "g": "red"}
    stale = [(s, c) for s, c in settled if s in "abe" or (s in wanted and c != wanted[s])]
    record({"c", "d", "f", "g", "h"} <= {s for s, _ in after} and not stale,
           f"{label}: the new photos show, replaced ones with their new picture, deleted ones no more "
           f"({len(after)} frames since the sync; stale: {stale[:3]})")
    output = player.output()
    record("skipped" not in output and ".tmp" not in output and "~tmp~" not in output,
           f"{label}: no temporary or half-written file was read (no 'skipped' in the log)")
    record(player.stop() == 0, f"{label}: the player ran on and stopped cleanly")


def rename_over(vitrine, work):
    library = f"{work}/lib-rename"
    for name, color in [("a", "red"), ("b", "green")]:
        photo(f"{library}/Trips/{name}.jpg", color)
    photo(f"{work}/lib-rename.new/Trips/x.jpg", "cyan")
    photo(f"{work}/lib-rename.new/Trips/y.jpg", "magenta")
    player = Player(vitrine, work, "rename", library, 0.15)
    player.wait(lambda: len(player.presented()) >= 3)
    start = len(player.presented())
    os.rename(library, f"{work}/lib-rename.old")
    time.sleep(0.3)
    os.rename(f"{work}/lib-rename.new", library)
    ok = player.wait(lambda: {"x", "y"} <= {s for s, _ in shown_since(player, start)}, 20)
    record(ok, f"a library folder renamed into place: its photos show "
               f"({sorted({s for s, _ in shown_since(player, start) if s})})")
    # The watches follow the new folder: a photo added to it later joins the show.
    before = len(player.presented())
    photo(f"{work}/.z.jpg", "orange")
    os.rename(f"{work}/.z.jpg", f"{library}/Trips/z.jpg")
    ok = player.wait(lambda: "z" in {s for s, _ in shown_since(player, before)}, 20)
    record(ok, "a photo added to the new folder afterwards joins the show")
    seen_old = [s for s, _ in shown_since(player, before) if s in ("a", "b")]
    record(not seen_old, f"nothing of the old folder shows after the rename ({seen_old[:3]})")
    record(player.stop() == 0, "the player ran on and stopped cleanly")


def symlink_flip(vitrine, work):
    """Signage deployments often publish a new tree and flip a `current` symlink to it (ln -s, then rename)."""
    photo(f"{work}/release1/Trips/a.jpg", "red")
    photo(f"{work}/release2/Trips/x.jpg", "cyan")
    os.symlink(f"{work}/release1", f"{work}/current")
    player = Player(vitrine, work, "flip", f"{work}/current", 0.15)
    player.wait(lambda: len(player.presented()) >= 3)
    start = len(player.presented())
    os.symlink(f"{work}/release2", f"{work}/current.new")
    os.rename(f"{work}/current.new", f"{work}/current")
    ok = player.wait(lambda: "x" in {s for s, _ in shown_since(player, start)}, 20)
    since = shown_since(player, start)
    record(ok and since[-1][0] == "x" and all(s for s, _ in since),
           f"a `current` symlink flipped to a new tree: the new tree shows, with no black frame between "
           f"({since[:4]})")
    record(player.stop() == 0, "the player ran on and stopped cleanly")


def resume_after_kill(vitrine, work):
    library = f"{work}/lib-resume"
    for index, color in enumerate(["red", "green", "blue", "yellow", "cyan"]):
        photo(f"{library}/Trips/{chr(97 + index)}.jpg", color)
    photo(f"{library}/Zoo/z.jpg", "orange")
    position = f"{work}/state/position.json"
    os.makedirs(os.path.dirname(position))
    extra = {"positionFile": position, "positionSaveInterval": 1}
    player = Player(vitrine, work, "resume", library, 600, extra)
    player.wait(lambda: len(player.presented()) >= 1)
    for _ in range(3):
        count = len(player.presented())
        player.ctl("next")
        player.wait(lambda: len(player.presented()) > count)
    showing = player.presented()[-1]["slide"]
    time.sleep(1.2)  # saves are at most one a second here (positionSaveInterval)
    player.stop(signal.SIGKILL)
    with open(position) as f:
        saved = json.load(f)
    record(saved.get("slide") == showing and saved.get("category") == "Trips",
           f"the position file names the slide on screen when killed: {saved}")
    again = Player(vitrine, work, "resume2", library, 600, extra)
    again.wait(lambda: len(again.presented()) >= 1)
    first = again.presented()[0]["slide"] if again.presented() else None
    record(first == showing, f"after SIGKILL and a restart the show resumes at {first} (was showing {showing})")
    count = len(again.presented())
    again.ctl("next")
    again.wait(lambda: len(again.presented()) > count)
    record(again.presented()[-1]["slide"] == chr(ord(showing) + 1), "and goes on from there")
    record(again.stop() == 0, "the resumed player stops cleanly")


def disk_full(vitrine, work):
    """Needs a small file system of its own: a tmpfs mounted in a private mount namespace (root, or an
    unprivileged user namespace)."""
    library = f"{work}/lib-full"
    for index, color in enumerate(["red", "green", "blue", "yellow"]):
        photo(f"{library}/Trips/{chr(97 + index)}.jpg", color)
    state = f"{work}/full"
    os.makedirs(state)
    position = f"{state}/position.json"
    script = f"""
set -e
mount -t tmpfs -o size=64k tmpfs {state}
printf '{{"version":1,"library":"{library}","category":"Trips","slide":"b"}}\\n' > {position}
head -c 1M /dev/zero > {state}/filler 2>/dev/null || true
exec {vitrine} play --config {work}/full.json --snapshots {work}/full-frames
"""
    config = {"library": library, "deviceTable": f"{REPO}/Config/devices.json", "interval": 0.3,
              "transition": "none", "controlSocket": f"{work}/full.sock", "positionFile": position,
              "positionSaveInterval": 1,
              "display": {"backend": "headless", "headlessSize": f"{PANEL[0]}x{PANEL[1]}"}}
    with open(f"{work}/full.json", "w") as f:
        json.dump(config, f)
    prefix = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-rm"]
    probe = subprocess.run(prefix + ["sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {state} && umount {state}"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"SKIP  disk full: cannot mount a small tmpfs here ({probe.stderr.strip()})")
        return
    log = open(f"{work}/full.log", "w")
    process = subprocess.Popen(prefix + ["sh", "-c", script], stdout=log, stderr=subprocess.STDOUT)
    frames = f"{work}/full-frames/presented.jsonl"

    def count():
        try:
            with open(frames) as f:
                return sum(1 for line in f if line.strip() and line.endswith("\n"))
        except FileNotFoundError:
            return 0

    deadline = time.monotonic() + 20
    while count() < 8 and time.monotonic() < deadline:
        time.sleep(0.1)
    # The file system is the player's own (its mount namespace): read the saved file through /proc.
    root = f"/proc/{process.pid}/root"
    pid = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True).stdout.split()
    player_root = f"/proc/{pid[0]}/root" if pid else root
    try:
        kept_inode = os.stat(f"{player_root}{position}").st_ino
        with open(f"{player_root}{position}") as f:
            kept = json.load(f)
        leftovers = [n for n in os.listdir(f"{player_root}{state}") if n not in ("position.json", "filler")]
    except (OSError, ValueError) as error:
        kept, leftovers, kept_inode = {"error": str(error)}, [], None
    with open(f"{work}/full.log") as f:
        output = f.read()
    warnings = [line for line in output.splitlines() if "cannot save the position" in line]
    record(count() >= 8, f"disk full: the show goes on ({count()} slides)")
    record(kept.get("slide") == "b", f"disk full: the saved position is kept whole ({kept})")
    record(len(warnings) == 1 and "No space left on device" in warnings[0] and not leftovers,
           f"disk full: said once, no temporary file left ({warnings[:1]}; left: {leftovers})")
    # Room again: the next slide is saved.
    os.unlink(f"{player_root}{state}/filler")
    before = count()
    deadline = time.monotonic() + 10
    while count() < before + 5 and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.2)
    with open(f"{work}/full-frames/presented.jsonl") as f:
        last = [json.loads(line) for line in f if line.strip() and line.endswith("\n")][-1]["slide"]
    try:
        inode = os.stat(f"{player_root}{position}").st_ino
        with open(f"{player_root}{position}") as f:
            now = json.load(f)
    except (OSError, ValueError) as error:
        now, inode = {"error": str(error)}, None
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=20)
    record(now.get("category") == "Trips" and now.get("slide") in ("a", "b", "c", "d") and inode != kept_inode,
           f"disk full: with room again the position is saved anew ({now}, last shown {last})")


def network_share(vitrine, work):
    """A library on a FUSE mount (bindfs over a folder, as sshfs or rclone mount would be): photos added and deleted
    on the far side send no inotify event through the mount, and the player's rescan finds them."""
    source = f"{work}/share-far-side"
    mount = f"{work}/share-mount"
    for name, color in [("a", "red"), ("b", "green")]:
        photo(f"{source}/Trips/{name}.jpg", color)
    os.makedirs(mount)
    mounted = subprocess.run(["bindfs", "--no-allow-other", source, mount], capture_output=True, text=True)
    if not record(mounted.returncode == 0, f"network share: bindfs mounts the far side ({mounted.stderr.strip()[:120]})"):
        return
    try:
        player = Player(vitrine, work, "share", mount, 0.3, {"rescanInterval": 2})
        player.wait(lambda: len(player.presented()) >= 1)
        record("is on FUSE" in player.output() and "read again every 2 s" in player.output(),
               "network share: the player says the library is on FUSE and is read again every 2 s")
        added = time.monotonic()
        photo(f"{source}/Trips/c.jpg", "blue")
        seen = player.wait(lambda: any(r["slide"] == "c" for r in player.presented()), timeout=15)
        record(seen, f"network share: a photo added on the far side is shown ({time.monotonic() - added:.1f} s later)")
        os.unlink(f"{source}/Trips/a.jpg")
        gone_at = len(player.presented())
        # After the next rescan (2 s) a full round of the two photos left (0.6 s) must not show it.
        player.wait(lambda: len(player.presented()) >= gone_at + 12, timeout=20)
        later = [r["slide"] for r in player.presented()[gone_at + 8:]]
        record(later and "a" not in later, f"network share: a photo deleted on the far side leaves the show ({later})")
        record(player.stop() == 0, "network share: the player stops cleanly")
    finally:
        subprocess.run(["fusermount", "-u", mount], capture_output=True)


def frozen_share(vitrine, work):
    """A library on a share that stops answering (a NAS on Wi-Fi): the player's thread touches no file, so the
    control socket answers throughout while a category switch, a web listing and an upload wait on the share."""
    import http.client
    import threading
    import urllib.parse
    stall = float(os.environ.get("VITRINE_STALL_SECONDS", "60"))
    source = f"{work}/frozen-far-side"
    mount = f"{work}/frozen-mount"
    control = f"{mount}.freeze"
    for category, colors in (("A", ["red", "green"]), ("B", ["blue"])):
        for index, color in enumerate(colors):
            photo(f"{source}/{category}/{index:02d}-{color}.jpg", color)
    fs = mount_freezable(source, mount, "frozen share")
    if fs is None:
        return
    port = None
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    state = f"{work}/frozen-state"
    player = None
    try:
        player = Player(vitrine, work, "frozen", mount, 1.0,
                        {"startCategory": "A", "web": {"address": "127.0.0.1", "port": port,
                                                       "pages": f"{REPO}/web"}},
                        env={"STATE_DIRECTORY": state})
        player.wait(lambda: len(player.presented()) >= 2 and os.path.exists(f"{state}/web-token"))
        with open(f"{state}/web-token") as f:
            token = f.read().strip()

        def web(method, target, body=None):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=stall + 60)
            try:
                connection.request(method, target, body=body, headers={"Authorization": f"Bearer {token}"})
                response = connection.getresponse()
                return response.status, response.read()
            except OSError as error:
                return None, str(error).encode()
            finally:
                connection.close()

        answers = {}

        def ask(label, method, target, body=None):
            started = time.monotonic()
            status, data = web(method, target, body)
            answers[label] = (status, time.monotonic() - started, data[:200])

        import io
        upload = io.BytesIO()
        Image.new("RGB", PANEL, COLORS["yellow"]).save(upload, "JPEG", quality=90)
        # An upload under way when the share stops: its file is open, and the rest of its body (megabytes, more
        # than the player queues) arrives during the stall, so the writes to the share wait on it.
        big = io.BytesIO()
        Image.frombytes("RGB", (1600, 1200), os.urandom(1600 * 1200 * 3)).save(big, "JPEG", quality=95)
        big = big.getvalue()
        raw = socket.create_connection(("127.0.0.1", port), timeout=stall + 60)
        target = "/api/photos?" + urllib.parse.urlencode({"category": "A", "name": "midway.jpg"})
        raw.sendall((f"POST {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
                     f"Content-Length: {len(big)}\r\nConnection: close\r\n\r\n").encode() + big[:65536])
        player.wait(lambda: any(n.startswith(".upload-") for n in os.listdir(f"{source}/A")), timeout=10)
        rest = threading.Thread(target=raw.sendall, args=(big[65536:],))
        open(control, "w").close()
        frozen_at = time.monotonic()
        rest.start()
        asked = []
        threads = []

        def during(elapsed):
            if elapsed > 2 and "switch" not in asked:
                asked.append("switch")
                try:
                    answer = player.ctl("category B")
                except OSError as error:
                    answer = f"no answer: {error}"
                record(answer == "ok", f"frozen share: `category B` is answered during the stall: {answer!r}")
            if elapsed > 4 and "listing" not in asked:
                asked.append("listing")
                threads.append(threading.Thread(target=ask, args=("listing", "GET", "/api/photos?category=A")))
                threads[-1].start()
            if elapsed > 6 and "upload" not in asked:
                asked.append("upload")
                target = "/api/photos?" + urllib.parse.urlencode({"category": "A", "name": "during.jpg"})
                threads.append(threading.Thread(target=ask, args=("upload", "POST", target, upload.getvalue())))
                threads[-1].start()
        latencies = status_through(player, frozen_at, stall, during)
        slowest = max(latencies, key=lambda item: item[0])
        holding = [reply for _, reply in latencies[len(latencies) // 2:] if "loading" in reply.get("paused", [])]
        record(slowest[0] <= 0.1 and all("error" not in reply for _, reply in latencies),
               f"frozen share: `status` answered {len(latencies)} times in {stall:.0f} s, the slowest in "
               f"{slowest[0] * 1000:.0f} ms (100 ms allowed)")
        record(bool(holding), f"frozen share: the show holds with the loading reason ({len(holding)} statuses say so)")
        os.unlink(control)
        thawed = time.monotonic()
        moved = player.wait(lambda: any(r.get("category") == "B" for r in player.presented()), timeout=30)
        record(moved, f"frozen share: after the stall the show moves on to B "
                      f"({time.monotonic() - thawed:.1f} s after the share answers again)")
        for thread in threads:
            thread.join(timeout=60)
        listing = answers.get("listing")
        record(listing is not None and listing[0] == 200 and b"00-red.jpg" in listing[2],
               f"frozen share: the web listing asked during the stall is answered after it: {listing}")
        uploaded = answers.get("upload")
        record(uploaded is not None and uploaded[0] == 201 and os.path.exists(f"{source}/A/during.jpg"),
               f"frozen share: the upload asked during the stall is saved after it: {uploaded}")
        rest.join(timeout=60)
        reply = b""
        try:
            while b"\r\n\r\n" not in reply:
                chunk = raw.recv(4096)
                if not chunk:
                    break
                reply += chunk
        except OSError as error:
            reply += str(error).encode()
        finally:
            raw.close()
        saved = f"{source}/A/midway.jpg"
        first_line = reply.split(b"\r\n")[0].decode(errors="replace")
        record(reply.startswith(b"HTTP/1.1 201") and os.path.exists(saved) and os.path.getsize(saved) == len(big),
               f"frozen share: an upload whose body arrived during the stall ({len(big) >> 10} KiB) is saved whole "
               f"after it: {first_line!r}")
        record(player.stop() == 0, "frozen share: the player stops cleanly")
        player = None
    finally:
        kill_and_unmount(player, fs, mount)


def status_through(player, since, seconds, during=lambda elapsed: None):
    """`status` asked every 0.2 s until `seconds` after `since` (`during` is told the time elapsed before each):
    (how long each answer took, the answer or the error)."""
    latencies = []
    while time.monotonic() - since < seconds:
        during(time.monotonic() - since)
        started = time.monotonic()
        try:
            reply = json.loads(player.ctl("status"))
        except (OSError, ValueError) as error:
            reply = {"error": str(error)}
        latencies.append((time.monotonic() - started, reply))
        time.sleep(0.2)
    return latencies


def mount_freezable(source, mount, label):
    """Tests/Faults/freezable_fs.py on `mount`, waited for; the process, or None (recorded as a failure)."""
    os.makedirs(mount)
    fs = subprocess.Popen(["/usr/bin/python3", f"{REPO}/Tests/Faults/freezable_fs.py", source, mount],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    until(lambda: os.path.ismount(mount), 10)
    if not record(os.path.ismount(mount), f"{label}: the FUSE passthrough is mounted"):
        fs.kill()
        return None
    return fs


def kill_and_unmount(player, fs, mount):
    """The end of a scenario on a freezable share: a player still running (a check failed before it was stopped)
    is killed, and the share unmounted."""
    if player is not None and player.process.poll() is None:
        player.process.kill()
    unmount_freezable(fs, mount)


def unmount_freezable(fs, mount):
    if os.path.exists(f"{mount}.freeze"):
        os.unlink(f"{mount}.freeze")
    subprocess.run(["fusermount", "-u", mount], capture_output=True)
    try:
        fs.wait(timeout=10)
    except subprocess.TimeoutExpired:
        fs.kill()


def replaced_while_frozen(vitrine, work):
    """The library folder replaced by a link into a share that has stopped answering: following the library to its
    new folder looks the path up, which waits on the share, so the player's thread must not be the one to do it.
    `status` answers throughout, and once the share answers the show plays the new library."""
    stall = float(os.environ.get("VITRINE_REPLACE_STALL_SECONDS", "10"))
    base = f"{work}/replaced"
    library = f"{base}/library"
    photo(f"{library}/A/00-red.jpg", "red")
    photo(f"{library}/A/01-green.jpg", "green")
    photo(f"{base}/far-side/tree/B/00-blue.jpg", "blue")
    mount = f"{base}/mount"
    fs = mount_freezable(f"{base}/far-side", mount, "library replaced during a stall")
    if fs is None:
        return
    player = None
    try:
        player = Player(vitrine, work, "replaced", library, 1.0)
        player.wait(lambda: len(player.presented()) >= 2)
        open(f"{mount}.freeze", "w").close()
        frozen_at = time.monotonic()
        # Nothing has looked up `tree` in the share yet: the kernel asks the frozen server.
        os.symlink(f"{mount}/tree", f"{base}/incoming")
        os.rename(library, f"{base}/old")
        os.rename(f"{base}/incoming", library)
        latencies = status_through(player, frozen_at, stall)
        slowest = max(latencies, key=lambda item: item[0])
        record(slowest[0] <= 0.1 and all("error" not in reply for _, reply in latencies),
               f"library replaced during a stall: `status` answered {len(latencies)} times in {stall:.0f} s, the "
               f"slowest in {slowest[0] * 1000:.0f} ms (100 ms allowed): {slowest[1].get('error', 'ok')}")
        os.unlink(f"{mount}.freeze")
        thawed = time.monotonic()
        moved = player.wait(lambda: any(r.get("category") == "B" for r in player.presented()), timeout=30)
        record(moved and "was replaced" in player.output(),
               f"library replaced during a stall: once the share answers the new library plays "
               f"({time.monotonic() - thawed:.1f} s after)")
        record(player.stop() == 0, "library replaced during a stall: the player stops cleanly")
        player = None
    finally:
        kill_and_unmount(player, fs, mount)


def clip_on_frozen_share(vitrine, work):
    """A clip playing from a share that stops answering mid-clip: its thread waits in a read the kernel holds,
    which nothing on the player's thread may wait for. A clip of noise (lossless, about 15 MB) so its reads go on
    to its end."""
    stall = float(os.environ.get("VITRINE_CLIP_STALL_SECONDS", "8"))
    base = f"{work}/clipstall"
    source = f"{base}/far-side"
    os.makedirs(f"{source}/A")
    made = subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
                           "nullsrc=s=320x180:r=30,geq=lum='random(1)*255':cb=128:cr=128", "-t", "8", "-c:v",
                           "libx264", "-preset", "ultrafast", "-qp", "0", "-pix_fmt", "yuv420p",
                           f"{source}/A/00-noise.mp4"], capture_output=True, text=True)
    if not record(made.returncode == 0, f"clip on a frozen share: ffmpeg makes a noise clip ({made.stderr[-200:]})"):
        return
    photo(f"{source}/A/01-red.jpg", "red")
    mount = f"{base}/mount"
    fs = mount_freezable(source, mount, "clip on a frozen share")
    if fs is None:
        return
    player = None
    try:
        player = Player(vitrine, work, "clipstall", mount, 1.0)

        def clip():
            try:
                return json.loads(player.ctl("status")).get("clip") or {}
            except (OSError, ValueError):
                return {}
        playing = player.wait(lambda: clip().get("playing") and clip().get("presented", 0) >= 15, timeout=30)
        record(playing, f"clip on a frozen share: the clip plays from the share ({clip()})")
        open(f"{mount}.freeze", "w").close()
        frozen_at = time.monotonic()
        answers = []

        def during(elapsed):
            if elapsed > 2 and not answers:
                try:
                    answers.append(player.ctl("next"))
                except OSError as error:
                    answers.append(f"no answer: {error}")
        latencies = status_through(player, frozen_at, stall, during)
        slowest = max(latencies, key=lambda item: item[0])
        record(slowest[0] <= 0.1 and all("error" not in reply for _, reply in latencies),
               f"clip on a frozen share: `status` answered {len(latencies)} times in {stall:.0f} s, the slowest in "
               f"{slowest[0] * 1000:.0f} ms (100 ms allowed)")
        # The stall reached the clip: its pictures stopped coming (asked every 0.2 s, before the `next` at 2 s).
        counts = [(reply.get("clip") or {}).get("presented") for _, reply in latencies[:9]]
        record(len(counts) == 9 and counts[3] is not None and counts[3] == counts[8],
               f"clip on a frozen share: the clip's pictures stop while its reads wait on the share ({counts})")
        left = [reply for _, reply in latencies if reply.get("slide") == "01-red"]
        os.unlink(f"{mount}.freeze")
        thawed = time.monotonic()
        # The photo after the clip is on the same share: unless it was decoded before the stall (the player holds
        # the next slide's decode back during a clip's first second, and the stall came half a second in), it can
        # only come once the share answers.
        record(answers == ["ok"] and (left or player.wait(lambda: json.loads(player.ctl("status")).get("slide")
                                                          == "01-red", timeout=30)),
               f"clip on a frozen share: `next` during the stall is answered ({answers}) and leaves the clip "
               f"({'during the stall' if left else 'once the share answers'})")
        count = len(player.presented())
        moved = player.wait(lambda: len(player.presented()) > count + 1, timeout=30)
        record(moved, f"clip on a frozen share: after the stall the show goes on "
                      f"({time.monotonic() - thawed:.1f} s after the share answers again)")
        record(player.stop() == 0, "clip on a frozen share: the player stops cleanly")
        player = None
    finally:
        kill_and_unmount(player, fs, mount)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vitrine", default=f"{REPO}/.build/release/vitrine")
    args = parser.parse_args()
    vitrine = os.path.abspath(args.vitrine)
    work = tempfile.mkdtemp(prefix="vitrine-faults-")
    try:
        if shutil.which("rsync"):
            rsync_over(vitrine, work, delay_updates=False)
            rsync_over(vitrine, work, delay_updates=True)
        else:
            record(False, "rsync is not installed (make faults installs it)")
        rename_over(vitrine, work)
        symlink_flip(vitrine, work)
        resume_after_kill(vitrine, work)
        disk_full(vitrine, work)
        if shutil.which("bindfs") and os.path.exists("/dev/fuse"):
            network_share(vitrine, work)
        else:
            record(False, "network share: bindfs or /dev/fuse is missing (make faults installs bindfs)")
        try:
            import fusepy  # noqa: F401 (Debian's python3-fusepy)
            frozen_share(vitrine, work)
            replaced_while_frozen(vitrine, work)
            clip_on_frozen_share(vitrine, work)
        except ImportError:
            record(False, "frozen share: python3-fusepy is missing (make faults installs it)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())

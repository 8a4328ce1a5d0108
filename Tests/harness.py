"""What every Python test script shares: the results and their closing line, waiting on a condition with a deadline
(never a fixed sleep), and the player's control socket. A script puts Tests/ on sys.path and imports it."""
import socket
import threading
import time

# One list for the whole process: the VM tests run one another's sections (test_cec uses test_gpio's guest).
results = []
_lock = threading.Lock()


def record(ok, what):
    """One check: PASS or FAIL and what was seen; returns `ok`. Threads may record at once."""
    with _lock:
        results.append(bool(ok))
        print(("PASS  " if ok else "FAIL  ") + what, flush=True)
    return ok


def summary(note=""):
    """Prints the closing `N passed, M failed` line (and `note`); the exit status."""
    failed = results.count(False)
    print(f"{results.count(True)} passed, {failed} failed" + (f" ({note})" if note else ""))
    return 1 if failed else 0


def until(condition, timeout, step=0.05):
    """Polls `condition` until it returns something true or `timeout` seconds passed; its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(step)
    return condition()


def until_done(condition, timeout, step=0.2):
    """Polls `condition`, which returns (done, value), until done or the deadline: (done, last value)."""
    deadline = time.monotonic() + timeout
    while True:
        done, value = condition()
        if done or time.monotonic() > deadline:
            return done, value
        time.sleep(step)


def accepts(port, host="127.0.0.1"):
    """Whether a TCP server listens on `port` (a connection is made and closed)."""
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def ctl(path, command, timeout=5):
    """One command line on the control socket at `path`; the answer's line."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(path)
        s.sendall(command.encode() + b"\n")
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            answer += chunk
        return answer.decode().strip()


_PROBE = """
import sys, time
period, threshold = float(sys.argv[1]), float(sys.argv[2])
last = time.monotonic()
while True:
    time.sleep(period)
    now = time.monotonic()
    if now - (last + period) > threshold:
        print(f"{last + period:.6f} {now:.6f}", flush=True)
    last = now
"""


class StallProbe:
    """A process outside the one under test that wakes every 2 ms and writes down each window in which it was held
    up by more than 4 ms: the machine's own stalls (another process, the host, the hypervisor), in CLOCK_MONOTONIC
    seconds like the player's `--stats ... at`. Lateness inside such a window is the machine's, not the player's."""

    def __init__(self, period=0.002, threshold=0.004):
        import subprocess
        import sys
        self.windows = []
        self._lock = threading.Lock()
        self._process = subprocess.Popen([sys.executable, "-c", _PROBE, str(period), str(threshold)],
                                         stdout=subprocess.PIPE, text=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self._process.stdout:
            start, end = (float(word) for word in line.split())
            with self._lock:
                self.windows.append((start, end))

    def held(self, start, end):
        """Seconds the probe was held up inside [start, end]."""
        with self._lock:
            windows = list(self.windows)
        return sum(max(0.0, min(end, b) - max(start, a)) for a, b in windows)

    def stop(self):
        self._process.kill()
        self._process.wait()
        self._reader.join(timeout=2)


def ctl_batch(path, commands, timeout=5):
    """Several command lines in one write on the control socket at `path`, as a script's `printf` sends them: the
    answers' lines, one per command, in order."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(path)
        s.sendall("".join(command + "\n" for command in commands).encode())
        answer = b""
        while answer.count(b"\n") < len(commands):
            chunk = s.recv(65536)
            if not chunk:
                break
            answer += chunk
        return answer.decode().splitlines()


def lateness(lines, probe):
    """(milliseconds late, of which the machine's) for each slide with a deadline in the player's `--stats` lines:
    the machine's share is the time `probe` (a StallProbe) was itself held up while the slide was due."""
    values = []
    for line in lines:
        words = line.split()
        index = words.index("deadline-to-present")
        if words[index + 1] == "-" or "at" not in words:
            continue
        late = float(words[index + 1])
        shown = float(words[words.index("at") + 1])
        values.append((late, probe.held(shown - late / 1000, shown) * 1000))
    return values


def presented(frames):
    """The lines of `presented.jsonl` in a `--snapshots` folder, one per presented frame.

    A line without its newline is still being written: Linux lets a read see part of an appending write (the CI run
    of stop 47 read half a line), so it is left for the next call."""
    import json
    try:
        with open(f"{frames}/presented.jsonl") as f:
            return [json.loads(line) for line in f if line.strip() and line.endswith("\n")]
    except FileNotFoundError:
        return []


def pip_tool(venv, package, version, tool):
    """`tool` of `package`==`version` in the venv at `venv`, installed from PyPI when missing (for what Debian does
    not package). Returns (path, None), or (None, why it cannot be had)."""
    import os
    import subprocess
    import sys
    path = f"{venv}/bin/{tool}"

    def installed():
        if not os.path.exists(f"{venv}/bin/python"):
            return None
        found = subprocess.run([f"{venv}/bin/python", "-c",
                                f"import importlib.metadata as m; print(m.version({package!r}))"],
                               capture_output=True, text=True)
        return found.stdout.strip() if found.returncode == 0 else None
    if installed() == version and os.path.exists(path):
        return path, None
    print(f"      installing {package} {version} into {venv}", flush=True)
    for step in ([sys.executable, "-m", "venv", venv], [f"{venv}/bin/pip", "install", "-q", f"{package}=={version}"]):
        done = subprocess.run(step, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            return None, (f"cannot install {package} {version} ({' '.join(step[:3])}): "
                          f"{(done.stderr or done.stdout).strip()[-300:]}")
    if installed() != version or not os.path.exists(path):
        return None, f"{package} {version} did not install {path}"
    return path, None


DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def pillow_reads_clock(image, expected):
    """An oracle outside Vitrine for the clock in the top-right corner: reads the first line of near-white text
    there glyph by glyph, each against the characters "0123456789:" drawn by Pillow in DejaVu Sans at the line's
    ink height and scaled to the glyph's box (the nearest wins). Returns (whether it reads `expected`, what it
    read, how far the nearest other character was behind on average)."""
    from PIL import Image, ImageChops, ImageDraw, ImageFont
    mask = image.convert("L").point(lambda v: 255 if v >= 170 else 0)
    region = mask.crop((image.width // 2, 0, image.width, image.height // 2))
    data, (width, height) = region.load(), region.size
    rows = [any(data[x, y] for x in range(width)) for y in range(height)]
    top = next((y for y, filled in enumerate(rows) if filled), None)
    if top is None:
        return False, "nothing", 0.0
    bottom = top
    while bottom + 1 < height and rows[bottom + 1]:
        bottom += 1
    line = region.crop((0, top, width, bottom + 1)).convert("1")
    pixels = line.load()
    columns = [any(pixels[x, y] for y in range(line.height)) for x in range(line.width)]
    glyphs, start = [], None
    for x, inked in enumerate(columns + [False]):
        if inked and start is None:
            start = x
        elif not inked and start is not None:
            glyph = line.crop((start, 0, x, line.height))
            glyphs.append(glyph.crop(glyph.getbbox()))
            start = None
    # The font size whose digits have the line's ink height.
    size = line.height
    for _ in range(6):
        box = ImageFont.truetype(DEJAVU, size).getbbox("0123456789")
        size = max(4, round(size * line.height / max(1, box[3] - box[1])))
    font = ImageFont.truetype(DEJAVU, size)

    def template(character, box_size):
        box = font.getbbox(character)
        canvas = Image.new("L", (box[2] - box[0] + 4, box[3] - box[1] + 4), 0)
        ImageDraw.Draw(canvas).text((2 - box[0], 2 - box[1]), character, font=font, fill=255)
        canvas = canvas.point(lambda v: 255 if v >= 128 else 0)
        return canvas.crop(canvas.getbbox()).resize(box_size, Image.NEAREST).convert("1")

    def iou(a, b):
        both = sum(1 for v in ImageChops.logical_and(a, b).getdata() if v)
        either = sum(1 for v in ImageChops.logical_or(a, b).getdata() if v)
        return both / max(1, either)
    read, margins = "", []
    for glyph in glyphs:
        scores = sorted(((iou(glyph, template(c, glyph.size)), c) for c in "0123456789:"), reverse=True)
        read += scores[0][1]
        margins.append(scores[0][0] - scores[1][0])
    return read == expected, read, sum(margins) / max(1, len(margins))

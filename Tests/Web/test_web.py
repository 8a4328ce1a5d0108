#!/usr/bin/python3
"""The web remote end to end, against the release binary on a headless panel (presented frames as snapshots):

A. a phone: headless Chromium (Debian's chromium and chromium-driver through python3-selenium) at 390x844 opens
   the access link, steps the show, changes the category, uploads two photos into a category that is not playing
   and sees them played, hides one and it stops playing, turns the screen off and on; a screenshot of the page is
   kept in .build/web-test/page-phone.png, and the browser console must have no JavaScript error;
B. security: every route without the token or with a wrong one is 401 and changes nothing; a change riding on the
   cookie from another origin is 403; path traversal in upload names and categories is refused and writes nothing
   outside the library; a 2 GiB upload is refused (413) before its body is read; content is checked (a PNG named
   .jpg is kept as .png, random bytes are 415); 500 connections at once and a slowloris client do not keep a
   script on another address out, nor make a flip late (0.2 s interval), nor leak descriptors;
D. where the parts meet: ten uploads into the category on screen, each counted and played within a second, a phone's
   clip uploaded there counted and played to its end (the show moving on by itself), and photos arriving there by `ln` then `rm` of the source, `cp -l`, `mv` and rsync; a 100-line write to the control
   socket gets 100 answers and 16 idle clients do not keep `vitrine ctl` out; `category` of a name that does not
   exist is an error, and folders called `next` or with spaces at their ends can be chosen;
E. two screens (`outputs`): the page offers them; the one chosen is the one its status line, category list,
   slide, Next and Pause are about; `/api/status` and `/api/slide.jpg` take `?output=NAME`;
C. schemathesis (from PyPI, in a venv under .build) against web/openapi.json: the server never answers 5xx and
   keeps to its description.

Prints PASS/FAIL per check and `N passed, M failed`. Usage: test_web.py --vitrine BIN
Under CI=true a missing prerequisite is a FAIL; elsewhere it is a SKIP line.
"""
import argparse
import errno
import http.client
import io
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.parse

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "Tests"))
import harness  # noqa: E402
from harness import ctl, record, results, summary, until  # noqa: E402  (Tests/harness.py)

ARTEFACTS = f"{REPO}/.build/web-test"
PANEL = (320, 240)
PHOTO = (160, 120)
CI = os.environ.get("CI") == "true"
COLORS = {"red": (230, 20, 20), "green": (20, 200, 40), "blue": (20, 40, 220), "yellow": (240, 220, 20),
          "cyan": (20, 210, 220), "magenta": (220, 30, 200), "white": (245, 245, 245), "orange": (250, 140, 20),
          "purple": (110, 30, 160), "grey": (120, 120, 120)}
# schemathesis is not in Debian: pinned, installed from PyPI into a venv under the build folder when missing.
# 4.32.5 runs on Debian bookworm's Python 3.11.
SCHEMATHESIS = "4.32.5"
VENV = f"{REPO}/.build/web-venv"
VBLANK_MS = 1000 / 60

try:
    from PIL import Image
except ImportError:
    Image = None


def missing(what):
    """A prerequisite that is not there: a FAIL under CI, a SKIP elsewhere."""
    if CI:
        record(False, f"{what} (CI=true: a missing prerequisite fails)")
    else:
        print(f"SKIP  {what}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def photo(path, color, fmt="JPEG"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    Image.new("RGB", PHOTO, COLORS[color]).save(path, fmt, **({"quality": 95} if fmt == "JPEG" else {}))
    return path


def make_library(root, categories):
    """`categories`: name -> colours; photo NN-COLOUR.jpg each."""
    for name, colors in categories.items():
        for index, color in enumerate(colors):
            photo(f"{root}/{name}/{index:02d}-{color}.jpg", color)
    return root


def nearest(pixel):
    return min(COLORS, key=lambda name: sum((a - b) ** 2 for a, b in zip(COLORS[name], pixel)))


def jpeg_color(data):
    """The colour name of an image's centre pixel, None when it is not an image."""
    import io
    try:
        with Image.open(io.BytesIO(data)) as image:
            image = image.convert("RGB")
            return nearest(image.getpixel((image.width // 2, image.height // 2)))
    except Exception:
        return None


def image_bytes(color, fmt="JPEG"):
    import io
    out = io.BytesIO()
    Image.new("RGB", PHOTO, COLORS[color]).save(out, fmt)
    return out.getvalue()


def listing(root, skip=()):
    """Every file and folder under `root` (relative path -> size, None for a folder), but those under `skip`."""
    found = {}
    for folder, folders, files in os.walk(root):
        relative = os.path.relpath(folder, root)
        if any(relative == s or relative.startswith(s + "/") for s in skip):
            folders[:] = []
            continue
        for name in folders:
            path = os.path.normpath(os.path.join(relative, name))
            if not any(path == s or path.startswith(s + "/") for s in skip):
                found[path] = None
        for name in files:
            path = os.path.normpath(os.path.join(relative, name))
            if not any(path == s or path.startswith(s + "/") for s in skip):
                found[path] = os.lstat(os.path.join(folder, name)).st_size
    return found


def q(**params):
    return "?" + urllib.parse.urlencode(params, quote_via=urllib.parse.quote)


class Player:
    """`vitrine play` on a headless panel with the web remote on a free loopback port; its state folder (the
    token) and snapshots in the work folder."""

    def __init__(self, work, name, library, interval, stats=False, web=None, extra=None, screen=None):
        self.work = work
        # With `outputs`: the output whose presented frames `presented` and `color` read (frames/NAME/).
        self.screen = screen
        self.name = name
        self.library = library
        self.state = f"{work}/{name}-state"
        self.frames = f"{work}/{name}-frames"
        self.socket = f"{work}/{name}.sock"
        self.log = f"{work}/{name}.log"
        self.config = f"{work}/{name}.json"
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        settings = {"address": "127.0.0.1", "port": self.port, "pages": f"{REPO}/web"}
        settings.update(web or {})
        config = {"library": library, "deviceTable": f"{REPO}/Config/devices.json", "interval": interval,
                  "transition": "none", "positionFile": "", "headerCacheFolder": "", "renditionCacheFolder": "",
                  "web": settings}
        config.update(extra or {})
        with open(self.config, "w") as f:
            json.dump(config, f)
        arguments = [VITRINE, "play", "--config", self.config, "--display", f"headless:{PANEL[0]}x{PANEL[1]}",
                     "--control", self.socket, "--snapshots", self.frames] + (["--stats"] if stats else [])
        env = {k: v for k, v in os.environ.items() if k not in ("JOURNAL_STREAM", "NOTIFY_SOCKET")}
        env["STATE_DIRECTORY"] = self.state
        self.process = subprocess.Popen(arguments, stdout=open(self.log, "w"), stderr=subprocess.STDOUT, env=env,
                                        cwd=work)
        self.token = until(self._token, 15)
        ready = self.token and until(lambda: self._answers() and self.presented(), 15)
        if not ready:
            self.stop()
            raise RuntimeError(f"the player {name} did not start (token {bool(self.token)}); its log:\n"
                               + self.output()[-2000:])

    def _token(self):
        if self.process.poll() is not None:
            return None
        try:
            with open(f"{self.state}/web-token") as f:
                token = f.read().strip()
        except OSError:
            return None
        return token if re.fullmatch(r"[0-9a-f]{64}", token) else None

    def _answers(self):
        try:
            return self.request("GET", "/api/status")[0] == 200
        except OSError:
            return False

    def request(self, method, target, body=None, headers=None, token=True, source=None, timeout=10):
        """(status, headers with lowercase names, body). `token`: True for the right bearer token, a string for
        that bearer token, None for none."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout,
                                                source_address=(source, 0) if source else None)
        try:
            sent = {}
            if token is True:
                sent["Authorization"] = f"Bearer {self.token}"
            elif token:
                sent["Authorization"] = f"Bearer {token}"
            sent.update(headers or {})
            connection.request(method, target, body=body, headers=sent)
            response = connection.getresponse()
            data = response.read()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, data
        finally:
            connection.close()

    def api(self, method, target, body=None, **options):
        status, _, data = self.request(method, target, body=body, **options)
        try:
            return status, json.loads(data)
        except ValueError:
            return status, data

    def status(self):
        return self.api("GET", "/api/status")[1]

    def ctl(self, command):
        """The control socket: the player's state without the web remote in between."""
        return ctl(self.socket, command)

    def frames_of(self, screen=None):
        screen = screen or self.screen
        return f"{self.frames}/{screen}" if screen else self.frames

    def presented(self, screen=None):
        try:
            with open(f"{self.frames_of(screen)}/presented.jsonl") as f:
                return [json.loads(line) for line in f if line.strip() and line.endswith("\n")]
        except (FileNotFoundError, ValueError):
            return []

    def color(self, index, screen=None):
        """The colour name of presented frame `index` (1-based), from its snapshot's centre pixel."""
        with Image.open(f"{self.frames_of(screen)}/{index:06d}.ppm") as image:
            pixel = image.convert("RGB").getpixel((PANEL[0] // 2, PANEL[1] // 2))
        return nearest(pixel)

    def latest_color(self, screen=None):
        count = len(self.presented(screen))
        return self.color(count, screen) if count else None

    def colors_since(self, start):
        """The colours of the frames presented after the first `start`."""
        return [self.color(index) for index in range(start + 1, len(self.presented()) + 1)]

    def output(self):
        with open(self.log, errors="replace") as f:
            return f.read()

    def lines(self, text):
        return [line for line in self.output().splitlines() if text in line]

    def descriptors(self):
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait()


def section(function, *arguments):
    """Runs one part; an exception is a FAIL, not the end of the run."""
    started = time.monotonic()
    print(f"---- {function.__doc__.strip().splitlines()[0]}", flush=True)
    try:
        function(*arguments)
    except Exception:
        record(False, f"{function.__name__} raised:\n{traceback.format_exc()}")
    print(f"---- {function.__name__}: {time.monotonic() - started:.1f} s", flush=True)


# ---------------------------------------------------------------------------------------------------------- A

def browser_prerequisites():
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing("python3-selenium is not installed (apt install python3-selenium)")
        return None
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver") or ("/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver")
                                              else None)
    if not chromium or not driver:
        missing("chromium and chromium-driver are not installed (apt install chromium chromium-driver)")
        return None
    return chromium, driver


def start_browser(chromium, chromedriver, log):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=390,844", "--no-first-run", "--disable-extensions"):
        options.add_argument(flag)
    options.binary_location = chromium
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(chromedriver, log_path=log)
    driver = webdriver.Chrome(service=service, options=options)
    # Headless Chromium keeps a window at least 500 px wide: the phone's viewport is set exactly instead.
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
    driver.set_page_load_timeout(20)
    return driver, service


def close_browser(driver, service):
    """Quits the browser and its driver, whatever state they are in."""
    for close in (driver and driver.quit, service and service.stop):
        if close:
            try:
                close()
            except Exception:
                pass


def tap(driver, element):
    """A click where a thumb would land: the element scrolled to the middle first, out from under the page's
    sticky header (Selenium scrolls it only just into view, where the header covers it)."""
    driver.execute_script("arguments[0].scrollIntoView({block: 'center', inline: 'center'})", element)
    element.click()


def choose(driver, ident, value):
    from selenium.webdriver.support.ui import Select
    element = driver.find_element("id", ident)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    Select(element).select_by_value(value)


# The centre pixel of the slide the page shows, or null while it has none loaded.
PAGE_SLIDE = """
const image = document.getElementById('slide');
if (image.hidden || !image.complete || !image.naturalWidth) return null;
const canvas = document.createElement('canvas');
canvas.width = image.naturalWidth;
canvas.height = image.naturalHeight;
const context = canvas.getContext('2d');
context.drawImage(image, 0, 0);
return Array.from(context.getImageData(canvas.width >> 1, canvas.height >> 1, 1, 1).data.slice(0, 3));
"""


def javascript_errors(entries):
    """SEVERE console entries but the browser's own line for a resource answered 4xx (a 404 slide before the
    first one is on screen is expected and handled by the page)."""
    return [entry for entry in entries if entry.get("level") == "SEVERE"
            and not re.search(r"Failed to load resource: the server responded with a status of 4\d\d",
                              entry.get("message", ""))]


def phone(work):
    """A. the page in headless Chromium at phone size"""
    tools = browser_prerequisites()
    if not tools:
        return
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    library = make_library(f"{work}/phone-lib", {"Animals": ["red", "green", "blue"], "Beach": ["yellow", "cyan"],
                                                 "Uploads": ["white"]})
    uploads = [photo(f"{work}/phone-files/sunset-magenta.jpg", "magenta"),
               photo(f"{work}/phone-files/forest-orange.jpg", "orange")]
    # A source whose server is not there (nothing listens on port 1): the page says so under the status line.
    source = {"kind": "webdav", "url": "http://127.0.0.1:1/dav/", "category": "Shared", "interval": 3600}
    player = Player(work, "phone", library, 3600, extra={"startCategory": "Animals", "sources": [source]})
    driver = service = None
    console = []
    try:
        driver, service = start_browser(*tools, f"{work}/chromedriver.log")
        text = lambda ident: driver.find_element(By.ID, ident).text  # noqa: E731

        def wait_frame(start, timeout=10):
            """The first frame presented after the first `start`: its index, or None."""
            return until(lambda: len(player.presented()) if len(player.presented()) > start else None, timeout)

        opened = time.monotonic()
        driver.get(f"{player.base}/?token={player.token}")
        shown = until(lambda: text("status").startswith("Animals") and "1 of 3" in text("status"), 10)
        record(shown, f"the access link opens the page and the status line shows the category playing: "
                      f"{text('status')!r} ({time.monotonic() - opened:.1f} s)")
        offline = until(lambda: text("sources").startswith("Shared: offline"), 15)
        record(offline and "Couldn't connect" in text("sources"),
               f"the page says where its photos come from and why not: {text('sources')!r}")
        cookies = {c["name"]: c for c in driver.get_cookies()}
        cookie = cookies.get("vitrine_token", {})
        record("token=" not in driver.current_url and cookie.get("value") == player.token
               and cookie.get("httpOnly") and cookie.get("sameSite") == "Strict",
               f"the token leaves the address bar ({driver.current_url}) for an HttpOnly SameSite=Strict cookie")

        def page_color():
            pixel = driver.execute_script(PAGE_SLIDE)
            return nearest(pixel) if pixel else None

        # The slide on the panel is on the page at once (at a 1-hour interval it will not change for a while).
        on_panel = player.latest_color()
        on_page = until(page_color, 10)
        status, headers, data = player.request("GET", "/api/slide.jpg")
        record(on_page == on_panel and status == 200 and jpeg_color(data) == on_panel,
               f"the slide on the panel ({on_panel}) is on the page ({on_page or 'nothing shown'}); "
               f"/api/slide.jpg answers {status} {headers.get('content-type')} "
               f"{jpeg_color(data) or data[:60]}")

        # Next: the frame on the player's panel changes.
        count = len(player.presented())
        before = player.color(count)
        pressed = time.monotonic()
        tap(driver, driver.find_element(By.ID, "next"))
        index = wait_frame(count)
        after = player.color(index) if index else None
        record(index and after != before and after in ("red", "green", "blue"),
               f"#next: the panel goes from {before} to {after} "
               f"({(time.monotonic() - pressed) * 1000:.0f} ms after the tap)")
        record(until(lambda: "2 of 3" in text("status"), 5) and until(lambda: page_color() == after, 5),
               f"and the status line follows: {text('status')!r}, the page shows the {page_color()} slide")

        # The category select.
        until(lambda: len(Select(driver.find_element(By.ID, "category")).options) == 3, 5)
        count = len(player.presented())
        choose(driver, "category", "Beach")
        index = wait_frame(count)
        follows = until(lambda: player.status().get("category") == "Beach" and text("status").startswith("Beach"),
                        5)
        frame = player.presented()[index - 1] if index else {}
        record(index and follows and frame.get("category") == "Beach" and player.color(index) in ("yellow", "cyan"),
               f"#category Beach: the player plays Beach ({player.color(index) if index else 'no new frame'}), "
               f"/api/status and the status line follow: {text('status')!r}")

        # Upload two photos into Uploads, which is not playing.
        choose(driver, "library-category", "Uploads")
        until(lambda: driver.find_elements(By.CSS_SELECTOR, '#photos .photo[data-category="Uploads"]'), 5)
        driver.find_element(By.ID, "upload-files").send_keys("\n".join(uploads))
        started = time.monotonic()
        tap(driver, driver.find_element(By.ID, "upload"))
        result = until(lambda: "added" in text("upload-result") and text("upload-result"), 20)
        saved = [f"{library}/Uploads/{os.path.basename(path)}" for path in uploads]
        same = all(os.path.exists(path) and open(path, "rb").read() == open(source, "rb").read()
                   for path, source in zip(saved, uploads))
        record(result and result.startswith("2 photos added to Uploads") and same,
               f"#upload of two photos into Uploads: {result!r}, both files in Uploads/ byte for byte "
               f"({time.monotonic() - started:.1f} s)")
        cards = until(lambda: {e.get_attribute("data-name") for e in
                               driver.find_elements(By.CSS_SELECTOR, "#photos .photo")} >=
                      {"sunset-magenta.jpg", "forest-orange.jpg"}, 5)
        record(cards, "the photo grid shows them")
        record(player.status().get("category") == "Beach", "the show stays in Beach meanwhile")

        # Play Uploads until both new photos have been on the panel.
        count = len(player.presented())
        choose(driver, "category", "Uploads")
        wait_frame(count)
        record(until(lambda: player.status().get("count") == 3 and text("status").startswith("Uploads"), 5),
               f"#category Uploads: 3 photos: {player.status().get('count')}")
        start = count
        for _ in range(6):
            if {"magenta", "orange"} <= set(player.colors_since(start)):
                break
            count = len(player.presented())
            tap(driver, driver.find_element(By.ID, "next"))
            wait_frame(count)
        seen = player.colors_since(start)
        record({"magenta", "orange"} <= set(seen), f"both uploaded photos played: {seen}")

        # Hide the orange one.
        card = driver.find_element(By.CSS_SELECTOR, '#photos .photo[data-name="forest-orange.jpg"]')
        tap(driver, card.find_element(By.CSS_SELECTOR, ".hide"))
        hidden_path = f"{library}/Uploads/.hidden/forest-orange.jpg"
        moved = until(lambda: os.path.exists(hidden_path) and not os.path.exists(saved[1]), 10)
        record(moved and until(lambda: card.get_attribute("data-hidden") == "true"
                               and card.find_element(By.CSS_SELECTOR, ".hide").text == "Show", 5),
               "Hide moves the file into Uploads/.hidden/ and the card says Show")
        counted = until(lambda: player.status().get("count") == 2, 10)
        record(counted, f"/api/status counts 2 photos in Uploads now: {player.status().get('count')}")
        start = len(player.presented())
        for _ in range(4):
            count = len(player.presented())
            tap(driver, driver.find_element(By.ID, "next"))
            wait_frame(count)
        seen = player.colors_since(start)
        record(len(seen) == 4 and "orange" not in seen and set(seen) == {"white", "magenta"},
               f"the hidden photo no longer plays (4 taps of Next: {seen})")

        # Screen off and on.
        tap(driver, driver.find_element(By.ID, "screen"))
        off = until(lambda: player.status().get("screen") == "off", 5)
        record(off and until(lambda: "screen off" in text("status") and text("screen") == "Screen on", 5)
               and player.ctl("status").find('"screen":"off"') >= 0,
               f"#screen turns the screen off: /api/status screen {player.status().get('screen')}, "
               f"{text('status')!r}")
        tap(driver, driver.find_element(By.ID, "screen"))
        on = until(lambda: player.status().get("screen") == "on", 5)
        record(on and until(lambda: text("screen") == "Screen off", 5),
               f"and on again: /api/status screen {player.status().get('screen')}")

        # The star: the photo on screen becomes a favourite, and the button says so; tapped again, it is not.
        slide = player.status().get("slide")
        tap(driver, driver.find_element(By.ID, "star"))
        starred = until(lambda: player.status().get("favourite") is True, 5)
        record(starred and until(lambda: text("star") == "★ Favourite", 5)
               and driver.find_element(By.ID, "star").get_attribute("aria-pressed") == "true",
               f"☆ stars the photo on screen ({slide}): /api/status favourite {player.status().get('favourite')}, "
               f"button {text('star')!r}")
        tap(driver, driver.find_element(By.ID, "star"))
        unstarred = until(lambda: player.status().get("favourite") is False, 5)
        record(unstarred and until(lambda: text("star") == "☆ Favourite", 5),
               f"and ★ unstars it: /api/status favourite {player.status().get('favourite')}")

        # The page as a phone shows it.
        driver.execute_script("window.scrollTo(0, 0)")
        until(lambda: driver.execute_script(
            "const i = document.getElementById('slide'); return !i.hidden && i.complete && i.naturalWidth > 0"), 10)
        os.makedirs(ARTEFACTS, exist_ok=True)
        shot = f"{ARTEFACTS}/page-phone.png"
        driver.save_screenshot(shot)
        with Image.open(shot) as image:
            size = image.size
            colors = image.convert("RGB").getcolors(maxcolors=1 << 20)
        record(size == (390, 844) and colors and len(colors) > 16,
               f"screenshot {os.path.relpath(shot, REPO)}: {size[0]}x{size[1]}, "
               f"{len(colors) if colors else 0} colours (not blank)")
        console = driver.get_log("browser")
        errors = javascript_errors(console)
        expected = [e.get("message", "")[:90] for e in console if e.get("level") == "SEVERE" and e not in errors]
        record(not errors, f"no JavaScript error in the console ({len(console)} entries; expected 4xx: {expected}): "
                           f"{[e.get('message') for e in errors][:5]}")
    finally:
        close_browser(driver, service)
        player.stop()


def screens(work):
    """E. two screens (`outputs`), each its own show: the page offers them, and steers and shows the one chosen"""
    tools = browser_prerequisites()
    if not tools:
        return
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    library = make_library(f"{work}/screens-lib", {"Menu": ["red", "green"], "Offers": ["blue", "yellow"]})
    player = Player(work, "screens", library, 3600, screen="menu", extra={"outputs": [
        {"name": "menu", "connector": "HDMI-A-1", "categories": ["Menu"]},
        {"name": "offers", "connector": "HDMI-A-2", "categories": ["Offers"]}]})
    driver = service = None
    try:
        until(lambda: player.presented("offers"), 10)
        status, offers = player.api("GET", "/api/status?output=offers")
        unknown, refusal = player.api("GET", "/api/status?output=lobby")
        record(status == 200 and offers.get("category") == "Offers" and offers.get("output") == "offers"
               and unknown == 404 and "no output named \"lobby\"" in str(refusal),
               f"/api/status?output=offers is the offers show ({offers.get('category')}); an unknown output is "
               f"{unknown}: {refusal}")
        status, _, data = player.request("GET", "/api/slide.jpg?output=offers")
        if status == 200 and jpeg_color(data) != player.latest_color("offers"):
            status, _, data = player.request("GET", "/api/slide.jpg?output=offers")
        record(status == 200 and jpeg_color(data) == player.latest_color("offers"),
               f"/api/slide.jpg?output=offers is the offers panel's slide ({jpeg_color(data)}, panel "
               f"{player.latest_color('offers')})")

        driver, service = start_browser(*tools, f"{work}/chromedriver-screens.log")
        text = lambda ident: driver.find_element(By.ID, ident).text  # noqa: E731
        driver.get(f"{player.base}/?token={player.token}")
        offered = until(lambda: driver.find_element(By.ID, "output-field").is_displayed()
                        and [o.get_attribute("value") for o in Select(driver.find_element(By.ID, "output")).options]
                        == ["menu", "offers"], 10)
        record(offered and until(lambda: text("status").startswith("Menu"), 5),
               f"the page offers the two screens and shows the first one's show: {text('status')!r}")
        choose(driver, "output", "offers")
        chosen = until(lambda: text("status").startswith("Offers"), 5)
        options = until(lambda: [o.get_attribute("value") for o in
                                 Select(driver.find_element(By.ID, "category")).options] == ["Offers"], 5)

        def page_color():
            pixel = driver.execute_script(PAGE_SLIDE)
            return nearest(pixel) if pixel else None
        shown = until(lambda: page_color() == player.latest_color("offers"), 10)
        record(chosen and options and shown,
               f"offers chosen: the status line ({text('status')!r}), the category list (only Offers) and the slide "
               f"({page_color()}) are the offers screen's")
        menu_count, offers_count = len(player.presented("menu")), len(player.presented("offers"))
        tap(driver, driver.find_element(By.ID, "next"))
        moved = until(lambda: len(player.presented("offers")) > offers_count, 5)
        record(moved and len(player.presented("menu")) == menu_count
               and until(lambda: page_color() == player.latest_color("offers"), 5),
               f"#next moves the offers screen alone (offers {offers_count} -> {len(player.presented('offers'))} "
               f"frames, menu {menu_count} -> {len(player.presented('menu'))}); the page shows its new slide")
        tap(driver, driver.find_element(By.ID, "pause"))
        paused = until(lambda: "user" in json.loads(player.ctl("@offers status")).get("paused", []), 5)
        menu = json.loads(player.ctl("@menu status")).get("paused")
        record(paused and "user" not in menu and until(lambda: text("pause") == "Resume", 5),
               f"#pause pauses the offers show alone (menu paused: {menu}); the button says {text('pause')!r}")
        console = driver.get_log("browser")
        errors = javascript_errors(console)
        record(not errors, f"no JavaScript error in the console: {[e.get('message') for e in errors][:5]}")
    finally:
        close_browser(driver, service)
        player.stop()


# ---------------------------------------------------------------------------------------------------------- B

def raw_connect(port, source=None, blocking=True):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if source:
        s.bind((source, 0))
    if blocking:
        s.settimeout(10)
        s.connect(("127.0.0.1", port))
    else:
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
    return s


def read_status_line(s, timeout):
    """The first line of the answer on raw socket `s`: (status or None, what went wrong)."""
    s.settimeout(timeout)
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except OSError as error:
        if not data:
            return None, f"{type(error).__name__}: {error}"
    match = re.match(rb"HTTP/1\.[01] (\d{3})", data)
    if match:
        return int(match.group(1)), ""
    return None, f"the answer {data[:60]!r}" if data else "the connection closed with no answer"


def pour(s, chunk, limit, counter, payload=None, end=b""):
    """Sends `chunk` on `s` from a thread until `limit` body bytes (`payload` of each chunk, all of it by default)
    are counted in `counter[0]` or the server closes; then `end`. Returns the started thread."""
    def run():
        try:
            while counter[0] < limit:
                s.sendall(chunk)
                counter[0] += payload or len(chunk)
            s.sendall(end)
        except OSError:
            pass
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def no_leftovers(folder):
    return [name for name in os.listdir(folder) if name.startswith(".upload-")]


def security(work):
    """B. tokens, origins, traversal, sizes and content"""
    library = make_library(f"{work}/guard-lib", {"Animals": ["red", "green", "blue"], "Beach": ["yellow"]})
    photo(f"{library}/Animals/.hidden/09-grey.jpg", "grey")
    outside = photo(f"{work}/outside.jpg", "purple")
    player = Player(work, "guard", library, 3600, web={"uploadLimitMiB": 8}, extra={"startCategory": "Animals"})
    try:
        token = player.token
        wrong = "0" * 64 if token != "0" * 64 else "1" * 64
        jpeg = image_bytes("magenta")
        origin = player.base
        state = lambda: (json.loads(player.ctl("status")), len(player.presented()))  # noqa: E731
        token_file = f"{player.state}/web-token"

        # Every route, without the token and with wrong ones.
        routes = [
            ("GET", "/", None), ("GET", "/index.html", None), ("GET", "/app.js", None), ("GET", "/style.css", None),
            ("GET", "/api/openapi.json", None), ("GET", "/api/status", None), ("GET", "/api/categories", None),
            ("GET", "/api/photos" + q(category="Animals"), None),
            ("GET", "/api/thumbnail" + q(category="Animals", name="00-red.jpg"), None),
            ("GET", "/api/thumbnail" + q(category="Animals", name="09-grey.jpg", hidden="1"), None),
            ("GET", "/api/slide.jpg", None), ("GET", "/metrics", None),
            ("POST", "/api/command", json.dumps({"command": "next"}).encode()),
            ("POST", "/api/command", json.dumps({"command": "screen off"}).encode()),
            ("POST", "/api/photos" + q(category="Animals", name="intruder.jpg"), jpeg),
            ("POST", "/api/photos/hide" + q(category="Animals", name="00-red.jpg"), None),
            ("POST", "/api/photos/show" + q(category="Animals", name="09-grey.jpg"), None),
            ("DELETE", "/api/photos" + q(category="Animals", name="01-green.jpg"), None),
            ("DELETE", "/api/photos" + q(category="Animals", name="09-grey.jpg", hidden="1"), None),
            ("POST", "/api/token", None),
        ]
        ways = {
            "no token": lambda target: (target, {}, None),
            "a wrong bearer": lambda target: (target, {}, wrong),
            "a wrong cookie": lambda target: (target, {"Cookie": f"vitrine_token={wrong}", "Origin": origin}, None),
            "a wrong ?token=": lambda target: (target + ("&" if "?" in target else "?") + f"token={wrong}",
                                               {"Origin": origin}, None),
            "a malformed header": lambda target: (target, {"Authorization": f"Basic {token}"}, None),
        }
        files_before = listing(work, skip=("guard-frames", "guard-state", "guard.log"))
        token_before = open(token_file).read()
        state_before = state()
        for method, target, body in routes:
            statuses = {}
            leaks = []
            for way, make in ways.items():
                sent_target, headers, bearer = make(target)
                status, answer_headers, data = player.request(method, sent_target, body=body, headers=headers,
                                                              token=bearer)
                statuses[way] = status
                if status == 401 and "www-authenticate" not in answer_headers:
                    leaks.append(f"{way}: no WWW-Authenticate")
                if b"use strict" in data or b"<main" in data or b"openapi" in data or b"\xff\xd8" in data[:2]:
                    leaks.append(f"{way}: the answer carries the resource")
            record(set(statuses.values()) == {401} and not leaks,
                   f"{method} {target.split('?')[0]}{' (hidden)' if 'hidden' in target else ''}: 401 without the "
                   f"token or with a wrong one: {sorted(set(statuses.values()))}"
                   + (f" {statuses}" if set(statuses.values()) != {401} else "") + (f" {leaks}" if leaks else ""))
        state_after = state()
        record(listing(work, skip=("guard-frames", "guard-state", "guard.log")) == files_before
               and open(token_file).read() == token_before,
               "and nothing changed: the library (hidden, trash) and every file of the test as before, the token too")
        record(state_after[1] == state_before[1] and state_after[0]["slide"] == state_before[0]["slide"]
               and state_after[0]["screen"] == "on",
               f"the show untouched: still {state_after[0]['slide']}, {state_after[1]} frames, screen on")

        # Cross-site requests riding on the cookie.
        status, headers, _ = player.request("GET", f"/?token={token}", token=None)
        set_cookie = headers.get("set-cookie", "")
        record(status == 200 and f"vitrine_token={token}" in set_cookie and "HttpOnly" in set_cookie
               and "SameSite=Strict" in set_cookie, f"the access link sets the cookie: {status} {set_cookie[:30]}…")
        cookie = {"Cookie": f"vitrine_token={token}"}
        hostile = [
            ("Origin: http://evil.example", {"Origin": "http://evil.example"}),
            ("Referer: http://evil.example/", {"Referer": "http://evil.example/page"}),
            ("Origin: null", {"Origin": "null"}),
            ("an origin that starts like ours", {"Origin": f"{origin}.evil.example"}),
            ("neither Origin nor Referer", {}),
        ]
        changes = [
            ("POST", "/api/command", json.dumps({"command": "next"}).encode(), "Content-Type", "application/json"),
            ("POST", "/api/photos" + q(category="Animals", name="csrf.jpg"), jpeg, "Content-Type", "image/jpeg"),
            ("POST", "/api/photos/hide" + q(category="Animals", name="00-red.jpg"), None, None, None),
            ("DELETE", "/api/photos" + q(category="Animals", name="01-green.jpg"), None, None, None),
            ("POST", "/api/token", None, None, None),
        ]
        files_before = listing(work, skip=("guard-frames", "guard-state", "guard.log"))
        state_before = state()
        for label, extra in hostile:
            statuses = []
            for method, target, body, name, value in changes:
                headers = dict(cookie, **extra)
                if name:
                    headers[name] = value
                statuses.append(player.request(method, target, body=body, headers=headers, token=None)[0])
            record(set(statuses) == {403}, f"a change on the cookie with {label}: 403 for command, upload, hide, "
                                           f"delete and token: {statuses}")
        state_after = state()
        record(state_after[1] == state_before[1] and state_after[0]["slide"] == state_before[0]["slide"]
               and listing(work, skip=("guard-frames", "guard-state", "guard.log")) == files_before
               and open(token_file).read() == token_before,
               f"and nothing happened: the slide still {state_after[0]['slide']}, no file touched, the token kept")
        count = len(player.presented())
        status = player.request("POST", "/api/command", body=json.dumps({"command": "next"}).encode(),
                                headers=dict(cookie, Origin=origin, **{"Content-Type": "application/json"}),
                                token=None)[0]
        record(status == 200 and until(lambda: len(player.presented()) > count, 10),
               f"the same command on the cookie from the page's own origin is taken: {status}, a new frame")

        # Path traversal in uploads and in the names of the other routes.
        skip = ("guard-lib/Animals", "guard-lib/Beach", "guard-state", "guard-frames", "guard.log")
        files_before = listing(work, skip=skip)
        attempts = [("Animals", "../evil.jpg"), ("Animals", "/etc/evil.jpg"), ("Animals", "..\\evil.jpg"),
                    ("../..", "evil.jpg"), ("..", "evil.jpg"), ("", "../evil.jpg"), ("Animals", "../../evil.jpg"),
                    ("Animals/../..", "evil.jpg"), ("/tmp", "evil.jpg"), ("Animals", "sub/../../evil.jpg")]
        for category, name in attempts:
            status, answer = player.api("POST", "/api/photos" + q(category=category, name=name), body=jpeg,
                                        headers={"Content-Type": "image/jpeg"})
            why = answer.get("error", answer) if isinstance(answer, dict) else answer
            record(400 <= status < 500 and isinstance(answer, dict) and answer.get("error"),
                   f"upload category {category!r} name {name!r}: {status} {why!r}"[:200])
        reads = [("GET", "/api/thumbnail" + q(category="Animals", name="../../outside.jpg")),
                 ("GET", "/api/thumbnail" + q(category="Animals", name="../../outside.jpg", hidden="1")),
                 ("GET", "/api/thumbnail" + q(category="../..", name="outside.jpg")),
                 ("GET", "/api/thumbnail" + q(category="", name="../outside.jpg")),
                 ("GET", "/api/photos" + q(category="..")),
                 ("POST", "/api/photos/hide" + q(category="Animals", name="../../outside.jpg")),
                 ("POST", "/api/photos/show" + q(category="Animals", name="../../../outside.jpg")),
                 ("DELETE", "/api/photos" + q(category="Animals", name="../../outside.jpg")),
                 ("DELETE", "/api/photos" + q(category="../..", name="outside.jpg"))]
        statuses = [player.request(method, target)[0] for method, target in reads]
        record(all(400 <= s < 500 for s in statuses) and os.path.exists(outside),
               f"thumbnail, listing, hide, show and delete of ../ names are refused: {statuses}, "
               f"{os.path.basename(outside)} outside the library untouched")
        escaped = [path for path in ("/etc/evil.jpg", "/tmp/evil.jpg", f"{work}/evil.jpg")
                   if os.path.exists(path)]
        evil = [os.path.join(folder, name) for folder, _, names in os.walk(work) for name in names
                if "evil" in name]
        after = listing(work, skip=skip)
        added = sorted(set(after) - set(files_before))
        changed = sorted(k for k in files_before if after.get(k, -1) != files_before[k])
        record(not escaped and not evil and not added and not changed,
               f"nothing written outside the library's categories: new {added}, changed {changed}, "
               f"evil files {escaped + evil}")

        # 2 GiB announced: refused on the headers, before the body.
        animals = f"{library}/Animals"
        s = raw_connect(player.port)
        sent = [0]
        try:
            s.sendall((f"POST /api/photos?category=Animals&name=huge.jpg HTTP/1.1\r\nHost: 127.0.0.1:{player.port}"
                       f"\r\nAuthorization: Bearer {token}\r\nContent-Type: image/jpeg\r\n"
                       f"Content-Length: {2 << 30}\r\n\r\n").encode())
            started = time.monotonic()

            pourer = pour(s, b"\xff" * 65536, 4 << 20, sent)
            status, problem = read_status_line(s, 10)
            took = time.monotonic() - started
            pourer.join(5)
        finally:
            s.close()
        record(status == 413 and took < 2,
               f"Content-Length 2 GiB: {status or problem} after {took * 1000:.0f} ms, "
               f"{sent[0] >> 10} KiB of the body taken by the socket before it closed")
        record(until(lambda: not no_leftovers(animals), 5) and not os.path.exists(f"{animals}/huge.jpg"),
               f"and nothing left in the category: {no_leftovers(animals)}")

        # A phone that walks away mid-upload: half the announced body, then the connection closes. The partial
        # file goes, and the next upload is served as usual.
        s = raw_connect(player.port)
        try:
            s.sendall((f"POST /api/photos?category=Animals&name=walked.jpg HTTP/1.1\r\nHost: 127.0.0.1:{player.port}"
                       f"\r\nAuthorization: Bearer {token}\r\nContent-Length: {1 << 20}\r\n\r\n").encode()
                      + b"\xff\xd8" + b"\x00" * (512 << 10))
            partial = until(lambda: no_leftovers(animals), 5)
        finally:
            s.close()
        gone = until(lambda: not no_leftovers(animals), 15)
        status, _ = player.api("POST", "/api/photos" + q(category="Animals", name="after.jpg"),
                               body=image_bytes("blue"))
        record(partial and gone and not os.path.exists(f"{animals}/walked.jpg") and status == 201,
               f"an upload abandoned half way: its partial file {partial} is removed when the connection closes, "
               f"and the next upload gets {status}")

        # Chunked, no length announced, past web.uploadLimitMiB (8): stopped while streaming.
        s = raw_connect(player.port)
        try:
            s.sendall((f"POST /api/photos?category=Animals&name=stream.jpg HTTP/1.1\r\nHost: 127.0.0.1:{player.port}"
                       f"\r\nAuthorization: Bearer {token}\r\nTransfer-Encoding: chunked\r\n\r\n").encode())
            started = time.monotonic()
            streamed = [0]
            piece = b"\xff\xd8" + b"\x00" * (65536 - 2)
            pourer = pour(s, f"{len(piece):x}\r\n".encode() + piece + b"\r\n", 12 << 20, streamed,
                          payload=len(piece), end=b"0\r\n\r\n")
            status, problem = read_status_line(s, 15)
            took = time.monotonic() - started
            pourer.join(5)
        finally:
            s.close()
        record(status == 413 and until(lambda: not no_leftovers(animals), 5)
               and not os.path.exists(f"{animals}/stream.jpg"),
               f"a chunked upload past uploadLimitMiB 8: {status or problem} after {streamed[0] >> 20} MiB "
               f"({took:.1f} s), nothing left: {no_leftovers(animals)}")

        # A command body past the 16 KiB taken in memory: announced, and chunked without a length.
        big = json.dumps({"command": "next", "padding": "x" * (20 << 10)}).encode()
        count = len(player.presented())
        announced = player.request("POST", "/api/command", body=big, headers={"Content-Type": "application/json"})[0]
        s = raw_connect(player.port)
        try:
            s.sendall((f"POST /api/command HTTP/1.1\r\nHost: 127.0.0.1:{player.port}\r\nAuthorization: Bearer {token}"
                       f"\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n").encode()
                      + f"{len(big):x}\r\n".encode() + big + b"\r\n0\r\n\r\n")
            chunked, problem = read_status_line(s, 10)
        finally:
            s.close()
        # A `next` taken despite the size would show a frame: waited for, with a deadline it must reach.
        shown = until(lambda: len(player.presented()) != count, 0.5)
        record(announced == 413 and chunked == 413 and not shown and len(player.presented()) == count,
               f"a 20 KiB command body: {announced} announced, {chunked or problem} chunked; not carried out")

        # The content decides, not the name.
        png = image_bytes("cyan", "PNG")
        status, answer = player.api("POST", "/api/photos" + q(category="Animals", name="drawing.jpg"), body=png,
                                    headers={"Content-Type": "image/jpeg"})
        kept = f"{animals}/drawing.png"
        record(status == 201 and isinstance(answer, dict) and answer.get("name") == "drawing.png"
               and os.path.exists(kept) and open(kept, "rb").read() == png
               and not os.path.exists(f"{animals}/drawing.jpg"),
               f"a PNG named drawing.jpg: {status}, kept as "
               f"{answer.get('name') if isinstance(answer, dict) else answer}")
        logged = until(lambda: player.lines("added to category"), 5) or []
        record(any("drawing.png added" in line for line in logged),
               f"the log names the file as saved: {[line.split('web remote: ')[-1] for line in logged]}")
        noise = os.urandom(200_000)
        status, answer = player.api("POST", "/api/photos" + q(category="Animals", name="noise.jpg"), body=noise,
                                    headers={"Content-Type": "image/jpeg"})
        record(status == 415 and not os.path.exists(f"{animals}/noise.jpg")
               and until(lambda: not no_leftovers(animals), 5),
               f"random bytes named noise.jpg: {status} {answer.get('error', '') if isinstance(answer, dict) else ''}"
               f"; no file left: {[n for n in os.listdir(animals) if 'noise' in n or n.startswith('.upload-')]}")
        status, answer = player.api("POST", "/api/photos" + q(category="Nowhere", name="x.jpg"), body=jpeg)
        record(status == 404, f"an upload into a category that does not exist: {status}")

        # A new token: the old one stops working at once, on the bearer and in the cookie.
        old = player.token
        status, headers, data = player.request("POST", "/api/token")
        new = json.loads(data).get("token") if status == 200 else None
        with open(token_file) as f:
            saved = f.read().strip()
        refused = (player.request("GET", "/api/status", token=old)[0],
                   player.request("GET", "/", headers={"Cookie": f"vitrine_token={old}"}, token=None)[0])
        taken = player.request("GET", "/api/status", token=new)[0] if new else None
        record(status == 200 and new and new != old and re.fullmatch(r"[0-9a-f]{64}", new) and saved == new
               and f"vitrine_token={new}" in headers.get("set-cookie", "") and refused == (401, 401) and taken == 200,
               f"POST /api/token: {status}, a new token in the answer, the cookie and {os.path.basename(token_file)}; "
               f"the old one refused {refused}, the new one taken ({taken})")
        player.token = new or player.token
        record(player.process.poll() is None and player.request("GET", "/api/status")[0] == 200,
               "the player is still up and answering")
    finally:
        player.stop()

    # A disk that must keep more free than it has (freeSpaceFloorMiB 1 TiB): uploads are refused with 507.
    library = make_library(f"{work}/full-lib", {"Animals": ["red"]})
    player = Player(work, "full", library, 3600, web={"freeSpaceFloorMiB": 1 << 20})
    try:
        status, answer = player.api("POST", "/api/photos" + q(category="Animals", name="more.jpg"),
                                    body=image_bytes("green"))
        left = [n for n in os.listdir(f"{library}/Animals") if n != "00-red.jpg"]
        record(status == 507 and not left,
               f"freeSpaceFloorMiB above the free space: {status} "
               f"{answer.get('error', '') if isinstance(answer, dict) else answer!r}; nothing left: {left}")
    finally:
        player.stop()

    # With a rendition cache, an uploaded photo larger than the screen gets the screen's rendition in the
    # background (NAME@WxH.jpg in the cache's mirror of the category), and the library itself is not written.
    library = make_library(f"{work}/cache-lib", {"Animals": ["red"]})
    cache = f"{work}/cache-renditions"
    player = Player(work, "cache", library, 3600, extra={"renditionCacheFolder": cache})
    try:
        big = io.BytesIO()
        Image.new("RGB", (1600, 1200), COLORS["green"]).save(big, "JPEG", quality=90)
        status, answer = player.api("POST", "/api/photos" + q(category="Animals", name="large.jpg"),
                                    body=big.getvalue())
        started = time.monotonic()
        made = until(lambda: [n for n in (os.listdir(f"{cache}/Animals") if os.path.isdir(f"{cache}/Animals")
                                          else []) if n.startswith("large@")], 30)
        size = Image.open(f"{cache}/Animals/{made[0]}").size if made else None
        record(status == 201 and made and size and max(size) <= max(PANEL) and
               sorted(os.listdir(f"{library}/Animals")) == ["00-red.jpg", "large.jpg"],
               f"an uploaded 1600x1200 photo gets the screen's rendition in the background: {made} {size} "
               f"({time.monotonic() - started:.1f} s after the upload's answer)")
    finally:
        player.stop()


def meet(work):
    """Where the parts meet: uploads into the category on screen, every other way a photo arrives, the control socket"""
    library = make_library(f"{work}/meet-lib", {"Family": ["red"], "next": ["green"], " Spaces ": ["yellow"]})
    player = Player(work, "meet", library, 3600, extra={"startCategory": "Family"})
    colors = ["blue", "cyan", "magenta", "white", "orange", "purple", "grey", "green", "yellow", "blue"]
    try:
        for index, color in enumerate(colors):
            started = time.monotonic()
            status, _ = player.api("POST", "/api/photos" + q(category="Family", name=f"upload-{index}.jpg"),
                                   body=image_bytes(color))
            counted = until(lambda: player.status().get("count") == index + 2, 1.0)
            counted_after = time.monotonic() - started
            # Played: stepping through the round reaches it, each step on screen within a second.
            played = False
            for _ in range(index + 2):
                before = len(player.presented())
                player.ctl("next")
                shown = until(lambda: len(player.presented()) > before, 1.0)
                if shown and player.presented()[-1].get("slide") == f"upload-{index}":
                    played = True
                    break
            record(status == 201 and counted and played,
                   f"upload {index + 1} of 10 into the category on screen: {status}, counted "
                   f"{player.status().get('count')} after {counted_after:.2f} s, played: {played}")
        # A clip from the phone into the category on screen: kept, counted, played to its end (the show moves on
        # by itself, the interval being an hour), its pictures all shown.
        clip = f"{work}/meet-clip.mp4"
        subprocess.run([sys.executable, f"{REPO}/Tests/Tools/make_clip.py", clip, "--frames", "45", "--size",
                        "320x180", "--fps", "30"], check=True)
        with open(clip, "rb") as f:
            count = player.status().get("count")
            status, _ = player.api("POST", "/api/photos" + q(category="Family", name="phone-clip.mp4"),
                                   body=f.read())
        counted = until(lambda: player.status().get("count") == count + 1, 1.0)
        reached = False
        for _ in range(count + 1):
            before = len(player.presented())
            player.ctl("next")
            until(lambda: len(player.presented()) > before, 1.0)
            if player.presented()[-1].get("slide") == "phone-clip":
                reached = True
                break
        after = len(player.presented()) if reached else 0
        ended = reached and until(lambda: len(player.presented()) > after
                                  and player.presented()[-1].get("slide") != "phone-clip", 10)
        figures = player.status().get("clip") or {}
        record(status == 201 and counted and reached and ended and figures.get("presented", 0) >= 44,
               f"a clip uploaded into the category on screen: {status}, counted: {counted}, played: {reached}, the "
               f"show moved on at its end: {ended} ({figures})")
        family = f"{library}/Family"
        elsewhere = f"{work}/meet-elsewhere"
        os.makedirs(elsewhere, exist_ok=True)
        ways = []
        photo(f"{elsewhere}/linked.jpg", "orange")
        ways.append(("ln then rm of the source", lambda: (os.link(f"{elsewhere}/linked.jpg", f"{family}/linked.jpg"),
                                                         os.unlink(f"{elsewhere}/linked.jpg"))))
        photo(f"{elsewhere}/kept.jpg", "purple")
        ways.append(("cp -l", lambda: subprocess.run(["cp", "-l", f"{elsewhere}/kept.jpg", f"{family}/kept.jpg"],
                                                    check=True)))
        photo(f"{elsewhere}/moved.jpg", "grey")
        ways.append(("mv", lambda: subprocess.run(["mv", f"{elsewhere}/moved.jpg", f"{family}/moved.jpg"],
                                                 check=True)))
        photo(f"{elsewhere}/synced.jpg", "cyan")
        ways.append(("rsync", lambda: subprocess.run(["rsync", f"{elsewhere}/synced.jpg", f"{family}/"],
                                                    check=True)))
        photo(f"{elsewhere}/copied.jpg", "white")
        ways.append(("cp", lambda: subprocess.run(["cp", f"{elsewhere}/copied.jpg", f"{family}/"], check=True)))
        for label, action in ways:
            count = player.status().get("count")
            started = time.monotonic()
            action()
            counted = until(lambda: player.status().get("count") == count + 1, 1.0)
            record(counted, f"a photo added to the category on screen by {label}: counted "
                            f"{player.status().get('count')} (was {count}) after {time.monotonic() - started:.2f} s")

        # The control socket: 100 lines in one write get 100 answers, in order.
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(10)
            s.connect(player.socket)
            s.sendall(b"status\n" * 99 + b"bogus\n")
            answers = b""
            deadline = time.monotonic() + 10
            while answers.count(b"\n") < 100 and time.monotonic() < deadline:
                chunk = s.recv(1 << 16)
                if not chunk:
                    break
                answers += chunk
            lines = answers.decode(errors="replace").splitlines()
            record(len(lines) == 100 and all(line.startswith("{") for line in lines[:99])
                   and lines[-1].startswith("error: unknown command"),
                   f"100 lines in one write to the control socket: {len(lines)} answers, the last "
                   f"{lines[-1][:40] if lines else None!r}")
        # Sixteen idle clients do not keep vitrine ctl out.
        idle = []
        try:
            for _ in range(16):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(player.socket)
                idle.append(s)
            result = subprocess.run([VITRINE, "ctl", "--control", player.socket, "status"], capture_output=True,
                                    text=True, timeout=10)
            record(result.returncode == 0 and result.stdout.startswith("{"),
                   f"vitrine ctl with 16 idle clients connected: exit {result.returncode} "
                   f"{(result.stdout or result.stderr).strip()[:60]!r}")
        finally:
            for s in idle:
                s.close()
        # Names: one that does not exist is an error (exit 1); next and spaces at the ends can be chosen.
        result = subprocess.run([VITRINE, "ctl", "--control", player.socket, "category", "NoSuch"],
                                capture_output=True, text=True, timeout=10)
        record(result.returncode == 1 and "no category named" in result.stderr,
               f"ctl category NoSuch: exit {result.returncode}, {result.stderr.strip()[:80]!r}")
        for name in ("next", " Spaces "):
            answer = player.ctl("category " + json.dumps(name))
            chosen = until(lambda: player.status().get("category") == name, 2)
            record(answer == "ok" and chosen, f"category {json.dumps(name)}: {answer!r}, "
                                              f"on screen {player.status().get('category')!r}")
        answer = player.api("POST", "/api/command", body=json.dumps({"command": "category \"Family\""}))
        record(answer[0] == 200 and until(lambda: player.status().get("category") == "Family", 2),
               f"category \"Family\" through the web remote: {answer}")
        answer = player.api("POST", "/api/command", body=json.dumps({"command": "category Nowhere"}))
        record(answer[0] == 400 and "no category named" in str(answer[1]),
               f"a category that does not exist through the web remote: {answer}")
        record(player.process.poll() is None, "the player is still up")
    finally:
        player.stop()


def open_socket(s):
    """Whether the server still holds the connection of non-blocking socket `s` (nothing to read, no EOF)."""
    try:
        return s.recv(1) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


def hold_flood(port, count, seconds, report):
    """`count` connections from 127.0.0.1 opened at once and held, idle, for `seconds`."""
    sockets = []
    try:
        for _ in range(count):
            try:
                sockets.append(raw_connect(port, blocking=False))
            except OSError as error:
                report["refused_locally"] = report.get("refused_locally", 0) + 1
                report["error"] = str(error)
        report["opened"] = len(sockets)
        # How many the server still holds once it has dealt with them (the rest closed by the per-address limit):
        # until the count stops changing, a second at most; then at the end of the window.
        held = [sum(1 for s in sockets if open_socket(s))]

        def settled():
            held.append(sum(1 for s in sockets if open_socket(s)))
            return len(held) > 3 and held[-1] == held[-2] == held[-3]
        until(settled, 1.0, step=0.1)
        report["held_after_1s"] = held[-1]
        window_end = time.monotonic() + max(0.0, seconds - 1)
        until(lambda: time.monotonic() >= window_end or not any(open_socket(s) for s in sockets), seconds)
        report["held_at_end"] = sum(1 for s in sockets if open_socket(s))
    finally:
        for s in sockets:
            s.close()


def slowloris(port, source, connections, seconds, report):
    """`connections` clients from `source`, each sending one byte of a never-ending header every 2 s."""
    line = b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100
    sockets = []
    try:
        for _ in range(connections):
            sockets.append(raw_connect(port, source=source))
        deadline = time.monotonic() + seconds
        position = 0
        closed = 0
        while time.monotonic() < deadline:
            for s in list(sockets):
                try:
                    s.send(line[position:position + 1])
                except OSError:
                    sockets.remove(s)
                    s.close()
                    closed += 1
            position += 1
            time.sleep(2)
        report["kept_open"] = len(sockets)
        report["closed_by_server"] = closed
    finally:
        for s in sockets:
            s.close()


def lateness(lines):
    values = []
    for line in lines:
        words = line.split()
        index = words.index("deadline-to-present")
        if words[index + 1] != "-":
            values.append(float(words[index + 1]))
    return values


def flood(work):
    """B. 500 connections and a slowloris client while the show runs at a 0.2 s interval"""
    library = make_library(f"{work}/flood-lib", {"Animals": ["red", "green", "blue", "yellow"]})
    player = Player(work, "flood", library, 0.2, stats=True)
    try:
        until(lambda: len(player.lines("deadline-to-present")) >= 3, 10)
        # Warm up what the API uses (worker, thumbnails) before counting descriptors.
        for target in ("/api/status", "/api/categories", "/api/photos?category=Animals", "/api/slide.jpg",
                       "/api/thumbnail?category=Animals&name=00-red.jpg"):
            player.request("GET", target)
        until(lambda: player.lines("deadline-to-present"), 5)
        baseline = player.descriptors()
        skip = len(player.lines("deadline-to-present"))
        # A window of the show without attack, for comparison: 20 slides (4 s at the 0.2 s interval).
        until(lambda: len(player.lines("deadline-to-present")) - skip >= 20, 15)
        reference = lateness(player.lines("deadline-to-present")[skip:])

        skip = len(player.lines("deadline-to-present"))
        flood_report, slow_report = {}, {}
        attackers = [threading.Thread(target=hold_flood, args=(player.port, 500, 15, flood_report), daemon=True),
                     # From a third address, so its connections are not refused by the limit the flood exhausts
                     # on 127.0.0.1: they occupy 8 slots for the whole 20 s.
                     threading.Thread(target=slowloris, args=(player.port, "127.0.0.3", 8, 20, slow_report),
                                      daemon=True)]
        started = time.monotonic()
        for attacker in attackers:
            attacker.start()
        answers = []
        peak = 0
        while time.monotonic() - started < 20:
            asked = time.monotonic()
            try:
                status, body = player.api("GET", "/api/status", source="127.0.0.2", timeout=5)
                answers.append((status, time.monotonic() - asked, isinstance(body, dict) and "slide" in body))
            except OSError as error:
                answers.append((str(error), time.monotonic() - asked, False))
            peak = max(peak, player.descriptors())
            time.sleep(0.5)
        for attacker in attackers:
            attacker.join(30)
        during = lateness(player.lines("deadline-to-present")[skip:])
        window = time.monotonic() - started

        good = [a for a in answers if a[0] == 200 and a[2]]
        slowest = max(a[1] for a in answers) if answers else None
        record(answers and len(good) == len(answers) and slowest < 2,
               f"a script on 127.0.0.2 is answered all along: {len(good)}/{len(answers)} requests 200, the slowest "
               f"in {slowest * 1000 if slowest is not None else 0:.0f} ms; {flood_report.get('opened')} connections "
               f"opened from 127.0.0.1, {flood_report.get('held_after_1s')} still held by the server after 1 s; "
               f"slowloris: {slow_report.get('kept_open')} of 8 kept open for 20 s")
        record(flood_report.get("opened") == 500 and flood_report.get("held_after_1s", 99) <= 8
               and flood_report.get("held_at_end") == 0,
               f"the flood: {flood_report.get('held_after_1s')} of 500 held by the server after 1 s (8 allowed an "
               f"address), {flood_report.get('held_at_end')} after 15 s idle (closed after 10 s)")
        worst = max(during) if during else None
        record(len(during) > 0.9 * window / 0.2 and worst is not None and worst - VBLANK_MS <= 20,
               f"no flip late during the attack: {len(during)} slides in {window:.0f} s, the latest {worst} ms "
               f"after its deadline, {(worst or 0) - VBLANK_MS:.1f} ms beyond the next vblank (20 ms allowed); "
               f"before the attack {max(reference) if reference else '-'} ms over {len(reference)} slides")
        back = until(lambda: player.descriptors() <= baseline + 2, 15, step=0.2)
        record(back, f"the player's descriptors are back: {baseline} before, {peak} at the peak, "
                     f"{player.descriptors()} after")
        record(player.process.poll() is None and player.request("GET", "/api/status")[0] == 200,
               "and it still answers on 127.0.0.1")
    finally:
        player.stop()


# ---------------------------------------------------------------------------------------------------------- C

def schemathesis_tool():
    """The `st` of the pinned schemathesis in VENV, installed from PyPI when missing; None when it cannot be."""
    st, problem = harness.pip_tool(VENV, "schemathesis", SCHEMATHESIS, "st")
    if problem:
        missing(problem)
    return st


def schema(work):
    """C. schemathesis against web/openapi.json"""
    st = schemathesis_tool()
    if not st:
        return
    categories = {"Animals": ["red", "green", "blue"], "Beach": ["yellow", "cyan"]}
    library = make_library(f"{work}/schema-lib", categories)
    photo(f"{library}/Animals/.hidden/09-grey.jpg", "grey")
    # Random names never exist, and every request would stop at 404 before the server's real work (thumbnails,
    # hide, show, trash): the categories and photos there are offered, mixed with generated values.
    names = [f"{index:02d}-{color}.jpg" for colors in categories.values() for index, color in enumerate(colors)]
    settings = f"{work}/schemathesis.toml"
    with open(settings, "w") as f:
        f.write("[dictionaries.categories]\nvalues = %s\n" % json.dumps([*categories, ""])
                + "[dictionaries.names]\nvalues = %s\n" % json.dumps(names + ["09-grey.jpg"])
                + "[parameters]\n"
                + '"query.category" = { dictionary = "categories", probability = 0.6 }\n'
                + '"query.name" = { dictionary = "names", probability = 0.6 }\n')
    player = Player(work, "schema", library, 3600)
    try:
        os.makedirs(ARTEFACTS, exist_ok=True)
        seed = os.environ.get("VITRINE_WEB_SEED", "19")
        examples = os.environ.get("VITRINE_WEB_EXAMPLES", "100")
        command = [st, "--config-file", settings, "run", f"{REPO}/web/openapi.json", "--url", player.base,
                   "-H", f"Authorization: Bearer {player.token}",
                   # It would rotate the token mid-run: every later request 401.
                   "--exclude-operation-id", "rotateToken",
                   "--checks", "all",
                   # positive_data_acceptance wants 2xx (or 404) for every request the schema allows, but
                   # schema-valid requests are rightly refused with documented 400s and 415s: an empty photo name
                   # (`name=`), a command the player cannot carry out (`interval 45088287`, past 86400 s), an
                   # upload body that is not a photo.
                   "--exclude-checks", "positive_data_acceptance",
                   "--max-examples", examples, "--seed", seed, "--workers", "1",
                   "--request-timeout", "10", "--generation-database", "none", "--no-color",
                   "--report", "junit", "--report-junit-path", f"{ARTEFACTS}/schemathesis-junit.xml"]
        os.makedirs(f"{work}/schemathesis", exist_ok=True)
        skip = ("schema-lib", "schema-state", "schema-frames", "schema.log", "schemathesis")
        files_before = listing(work, skip=skip)
        started = time.monotonic()
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=f"{work}/schemathesis",
                                  env=dict(os.environ, NO_COLOR="1", SCHEMATHESIS_TELEMETRY="false"))
            output, code = done.stdout + done.stderr, done.returncode
        except subprocess.TimeoutExpired as expired:
            # Python hands the output over as bytes here, text=True or not.
            output = expired.stdout.decode(errors="replace") if isinstance(expired.stdout, bytes) else ""
            code = "timeout (240 s)"
        took = time.monotonic() - started
        with open(f"{ARTEFACTS}/schemathesis.log", "w") as f:
            f.write(output)
        lines = output.splitlines()
        cases = next((lines[i + 1].strip() for i, line in enumerate(lines[:-1]) if line.strip() == "Test cases:"),
                     "no summary")
        phases = dict.fromkeys(f"{line.split()[1]} {line.split()[0]}" for line in lines
                               if re.match(r"\s*(✅|❌|🚫|⏭)\s+(Examples|Coverage|Fuzzing|Stateful)\b", line))
        final = next((line.strip("= ") for line in reversed(lines) if line.startswith("====")), "")
        record(code == 0, f"schemathesis {SCHEMATHESIS} (seed {seed}, {examples} examples an operation, all checks "
                          f"but positive_data_acceptance): exit {code} in {took:.0f} s; {cases}; "
                          f"{', '.join(phases)}; {final}")
        if code != 0:
            print("\n".join("      " + line for line in output.splitlines()[-80:]))
        record(player.process.poll() is None and player.request("GET", "/api/status")[0] == 200,
               "the player is still up and answering after it")
        after = listing(work, skip=skip)
        record(after == files_before, f"and nothing was written outside its library: "
                                      f"{sorted(set(after) ^ set(files_before))[:5]}")
    finally:
        player.stop()


VITRINE = None


def main():
    global VITRINE
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vitrine", default=f"{REPO}/.build/release/vitrine")
    parser.add_argument("--only", help="comma-separated parts to run: phone, screens, security, meet, flood, schema")
    args = parser.parse_args()
    VITRINE = os.path.abspath(args.vitrine)
    if Image is None:
        missing("python3-pil is not installed (apt install python3-pil)")
        return summary()
    if not os.access(VITRINE, os.X_OK):
        record(False, f"no player at {VITRINE} (make release)")
        return summary()
    work = tempfile.mkdtemp(prefix="vitrine-web-")
    started = time.monotonic()
    try:
        for part in (phone, screens, security, meet, flood, schema):
            if not args.only or part.__name__ in args.only.split(","):
                section(part, work)
    finally:
        failed = results.count(False)
        if failed:
            print(f"      the work folder is kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return summary(f"{time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    sys.exit(main())

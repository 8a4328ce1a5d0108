#!/usr/bin/python3
"""`shuffle`'s selection engine in the release binary on a headless panel, over a library this script writes and
therefore knows: 3,000 small JPEGs with EXIF capture dates over ten years (a quarter of them taken within two days
of today's date in earlier years), XMP ratings on a third of them (Lightroom's `xmp:Rating` packet), at a 0.05 s
interval with a mix of on-this-day, favourite, recent and rest shares.

1. the first 2,000 slides: no photo twice; each share within 2 points of the mix, measured from `presented.jsonl`
   (the player's `why`), and each share's photos are what it says, judged from the dates and ratings this script
   wrote (not from anything the player computes): on-this-day photos within the leeway of today's date in an earlier
   year, favourites rated 4 or more, recent picks younger than the rest's;
2. the player stopped (SIGTERM) mid-round and started again: it resumes at the slide on screen and the round goes
   on, so that every photo is shown once before any is shown twice, across the restart;
3. `vitrine ctl favourite` stars a photo rated below the favourite rating on screen: status says so, the stars
   file holds it;
4. day-parts (`playlists`), beside the rest in a player of its own, in the zone Europe/Berlin: a playlist whose
   window starts at the next whole minute is on screen within 0.1 s of that minute (the wall clock in
   `presented.jsonl`), `status` names it and until when, and its interval holds.

Prints PASS/FAIL per check and `N passed, M failed`. Usage: test_selection.py --vitrine BIN
"""
import argparse
import datetime
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import record, until  # noqa: E402

try:
    from PIL import Image
except ImportError:
    print("FAIL  PIL is missing (make selection-test installs python3-pil)")
    sys.exit(1)

PHOTOS = 3000
MIX = {"onThisDay": 0.1, "favourites": 0.15, "recent": {"share": 0.25, "days": 365}, "rest": 0.5}
SHARES = {"on this day": 0.1, "favourite": 0.15, "recent": 0.25, "round": 0.5}
LEEWAY = 3


def xmp_segment(rating):
    packet = ('<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/">'
              '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" '
              f'xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmp:Rating="{rating}"/></rdf:RDF></x:xmpmeta>'
              '<?xpacket end="w"?>').encode()
    payload = b"http://ns.adobe.com/xap/1.0/\0" + packet
    return b"\xff\xe1" + (len(payload) + 2).to_bytes(2, "big") + payload


def write_library(root, today, rng):
    """The photos and what this script knows of each: capture datetime and rating."""
    truth = {}
    os.makedirs(f"{root}/Family")
    for number in range(PHOTOS):
        if number % 4 == 0:
            # On today's date 1 to 9 years back, give or take two days.
            years = rng.randint(1, 9)
            try:
                base = today.replace(year=today.year - years)
            except ValueError:  # 29 February in a year that has none
                base = today.replace(year=today.year - years, day=28)
            taken = base + datetime.timedelta(days=rng.randint(-2, 2))
        else:
            # Any day of the last ten years at least ten days from today's date in any year.
            while True:
                taken = today - datetime.timedelta(days=rng.randint(0, 3650))
                if min(days_from_anniversary(taken, today), 400) >= 10:
                    break
        taken = datetime.datetime.combine(taken, datetime.time(rng.randint(8, 20), rng.randint(0, 59)))
        roll = rng.random()
        rating = 5 if roll < 0.35 else (2 if roll < 0.45 else None)
        name = f"img{number:05d}"
        truth[name] = (taken, rating)
        image = Image.new("RGB", (64, 48), (rng.randint(0, 255), rng.randint(0, 255), rng.randint(0, 255)))
        exif = Image.Exif()
        # The Exif sub-IFD given as a dict: Pillow 9 writes it (get_ifd's dict is not written back).
        exif[0x8769] = {36867: taken.strftime("%Y:%m:%d %H:%M:%S")}
        path = f"{root}/Family/{name}.jpg"
        image.save(path, quality=80, exif=exif.tobytes())
        if rating is not None:
            with open(path, "rb") as f:
                data = f.read()
            with open(path, "wb") as f:
                f.write(data[:2] + xmp_segment(rating) + data[2:])
    return truth


def days_from_anniversary(taken, today):
    """Days between a date and today's date in the same calendar (round the year), as a frame would count."""
    def ordinal(day):
        return datetime.date(2000, day.month, day.day).timetuple().tm_yday - 1  # 2000 is a leap year
    apart = abs(ordinal(taken) - ordinal(today))
    return min(apart, 366 - apart)


class DayPartPlayer:
    """A player in Berlin's zone whose only playlist starts at the next whole minute (at least 20 s away)."""

    def __init__(self, work):
        self.work = f"{work}/dayparts"
        os.makedirs(f"{self.work}/library")
        for category, colour in (("Everyday", (200, 40, 40)), ("Lunch", (40, 200, 40))):
            os.makedirs(f"{self.work}/library/{category}")
            for number in range(3):
                Image.new("RGB", (64, 48), colour).save(f"{self.work}/library/{category}/{number}.jpg")
        now = time.time()
        self.boundary = (int(now) // 60 + 1) * 60
        if self.boundary - now < 20:
            self.boundary += 60
        zone = "Europe/Berlin"
        os.environ["TZ"] = zone
        time.tzset()
        start = time.strftime("%H:%M", time.localtime(self.boundary))
        end = time.strftime("%H:%M", time.localtime(self.boundary + 3600))
        del os.environ["TZ"]
        time.tzset()
        self.socket = f"{self.work}/vitrine.sock"
        self.frames = f"{self.work}/frames"
        os.makedirs(self.frames)
        with open(f"{self.work}/vitrine.json", "w") as f:
            json.dump({"library": f"{self.work}/library", "interval": 2, "transition": "none",
                       "controlSocket": self.socket, "startCategory": "Everyday", "positionFile": "",
                       "headerCacheFolder": "", "renditionCacheFolder": "", "favouritesFile": "",
                       "playlists": [{"name": "Lunch", "categories": "Lunch", "from": start, "to": end,
                                      "interval": 0.5}],
                       "display": {"backend": "headless", "headlessSize": "96x64"}}, f)
        env = {k: v for k, v in os.environ.items() if k not in ("STATE_DIRECTORY", "JOURNAL_STREAM")}
        env["TZ"] = zone
        self.process = subprocess.Popen([VITRINE, "play", "--config", f"{self.work}/vitrine.json", "--snapshots",
                                         self.frames], stdout=open(f"{self.work}/log", "w"),
                                        stderr=subprocess.STDOUT, env=env)
        self.window = (start, end)

    def check(self):
        until(lambda: time.time() > self.boundary + 3, 120, step=0.5)
        status = json.loads(harness.ctl(self.socket, "status"))
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)
        slides = [line for line in harness.presented(self.frames) if line.get("slide") is not None]
        lunch = [line for line in slides if line["category"] == "Lunch"]
        before = [line for line in slides if line["wall"] < self.boundary]
        record(before and all(line["category"] == "Everyday" for line in before),
               f"before {self.window[0]} Berlin time the config's show plays ({len(before)} slides of Everyday)")
        late = lunch[0]["wall"] - self.boundary if lunch else None
        record(late is not None and 0 <= late <= 0.1,
               f"playlist Lunch ({self.window[0]}-{self.window[1]} Europe/Berlin) on screen "
               f"{late * 1000 if late is not None else None} ms after its boundary (0.1 s allowed)")
        gaps = [b["wall"] - a["wall"] for a, b in zip(lunch, lunch[1:])]
        record(gaps and all(0.45 <= gap <= 0.7 for gap in gaps),
               f"its own interval of 0.5 s: gaps {min(gaps) if gaps else None}...{max(gaps) if gaps else None} s")
        playlist = status.get("playlist") or {}
        record(playlist.get("name") == "Lunch" and str(playlist.get("until", "")).endswith(self.window[1]),
               f"status names the playlist in force and until when: {playlist}")


class Player:
    def __init__(self, work, library, name):
        self.work = work
        self.socket = f"{work}/vitrine.sock"
        self.frames = f"{work}/{name}-frames"
        self.log = f"{work}/{name}.log"
        os.makedirs(self.frames)
        self.config = f"{work}/vitrine.json"
        with open(self.config, "w") as f:
            json.dump({"library": library, "interval": 0.05, "transition": "none", "controlSocket": self.socket,
                       "mix": MIX, "caption": "{age}", "positionFile": f"{work}/position.json", "positionSaveInterval": 1,
                       "headerCacheFolder": f"{work}/headers", "renditionCacheFolder": "",
                       "favouritesFile": f"{work}/favourites.txt",
                       "display": {"backend": "headless", "headlessSize": "96x64"}}, f)
        env = {k: v for k, v in os.environ.items() if k not in ("STATE_DIRECTORY", "JOURNAL_STREAM")}
        env["TZ"] = "UTC"
        self.process = subprocess.Popen([VITRINE, "play", "--config", self.config, "--snapshots", self.frames],
                                        stdout=open(self.log, "w"), stderr=subprocess.STDOUT, env=env)
        until(lambda: os.path.exists(self.socket), 20)

    def status(self):
        return json.loads(harness.ctl(self.socket, "status"))

    def slides(self):
        return [line for line in harness.presented(self.frames) if line.get("slide") is not None]

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=60)


def main():
    work = tempfile.mkdtemp(prefix="vitrine-selection-")
    today = datetime.datetime.now(datetime.timezone.utc).date()
    rng = random.Random(35)
    library = f"{work}/library"
    started = time.monotonic()
    truth = write_library(library, today, rng)
    print(f"      wrote {PHOTOS} photos in {time.monotonic() - started:.1f} s", flush=True)

    dayparts = DayPartPlayer(work)
    first = Player(work, library, "first")
    # Slides go by at 20 a second: wait for 1,200 of them, then stop the player mid-round.
    until(lambda: len(first.slides()) >= 1200 or first.process.poll() is not None, 240, step=0.5)
    status = first.status()
    record(status.get("why") in SHARES and isinstance(status.get("favourite"), bool),
           f"status says why the slide was chosen and whether it is a favourite: {status.get('why')}, "
           f"{status.get('favourite')}")
    exit_code = first.stop()
    before = first.slides()
    record(exit_code == 0 and len(before) >= 1200, f"the first run showed {len(before)} slides and stopped ({exit_code})")
    with open(f"{work}/position.json") as f:
        saved = json.load(f)
    size = os.path.getsize(f"{work}/position.json")
    record("selection" in saved and size < 4096,
           f"the round is saved with the position in {size} bytes for {PHOTOS} photos")

    second = Player(work, library, "second")
    # The rest of the round and a few slides of the next.
    wanted = PHOTOS - len(set(s["slide"] for s in before)) + 30
    until(lambda: len(second.slides()) >= wanted or second.process.poll() is not None, 300, step=0.5)
    after = second.slides()
    # 3. Stars: the show paused on a photo rated below 4, which `favourite on` makes a favourite.
    harness.ctl(second.socket, "pause")
    for _ in range(50):
        on_screen = second.status().get("slide")
        if (truth.get(on_screen, (None, None))[1] or 0) < 4:
            break
        harness.ctl(second.socket, "next")
        until(lambda: second.status().get("slide") != on_screen, 5)
    was = second.status().get("favourite")
    answer = harness.ctl(second.socket, "favourite on")
    starred = until(lambda: second.status().get("favourite") is True, 5)
    second.stop()
    try:
        with open(f"{work}/favourites.txt") as f:
            stars = f.read()
    except FileNotFoundError:
        stars = ""
    rated = truth.get(on_screen, (None, None))[1]
    record(answer == "ok" and was is False and starred and f"+Family/{on_screen}\n" in stars,
           f"ctl favourite stars {on_screen} (rated {rated}): {answer}, status favourite {was} -> {starred}, "
           f"stars file {stars.strip()[:80]!r}")

    # 4. Day-parts (their player ran beside the others).
    dayparts.check()

    # 1. The first 2,000 slides.
    names = [s["slide"] for s in before] + [s["slide"] for s in after[1:]]
    record(after and after[0]["slide"] == before[-1]["slide"],
           f"the restarted player resumes at the slide on screen ({before[-1]['slide']} -> "
           f"{after[0]['slide'] if after else None})")
    head = names[:2000]
    record(len(head) == 2000 and len(set(head)) == 2000,
           f"2,000 slides without a photo twice ({len(set(head))} different of {len(head)})")
    whys = [s.get("why") for s in before] + [s.get("why") for s in after[1:]]
    counts = {reason: whys[:2000].count(reason) for reason in SHARES}
    for reason, share in SHARES.items():
        measured = counts[reason] / 2000
        record(abs(measured - share) <= 0.02,
               f"share {reason!r}: {measured * 100:.1f} % of 2,000 slides, mix {share * 100:.0f} %")
    chosen = list(zip(head, whys[:2000]))
    wrong_days = [n for n, why in chosen if why == "on this day"
                  and (days_from_anniversary(truth[n][0], today) > LEEWAY or truth[n][0].date().year >= today.year)]
    record(not wrong_days, f"every on-this-day slide was taken within {LEEWAY} days of today's date in an earlier "
                           f"year ({len(wrong_days)} not: {wrong_days[:3]})")
    # {age} on the anniversaries, in whole years from this script's own dates; nothing on the other slides.
    shown_lines = before + after[1:]
    wrong_ages = []
    for line in shown_lines[:2000]:
        caption = (line.get("captions") or [None])[0]
        if line.get("why") == "on this day":
            now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
            years = round((now - truth[line["slide"]][0]).total_seconds() / (365.2425 * 86400))
            wanted = "1 year ago today" if years == 1 else f"{years} years ago today"
        else:
            wanted = None
        if caption != wanted:
            wrong_ages.append((line["slide"], line.get("why"), caption, wanted))
    record(not wrong_ages, f"a caption of {{age}} says how many years ago an on-this-day photo was taken, and nothing "
                           f"on the others ({len(wrong_ages)} wrong: {wrong_ages[:2]})")
    wrong_favourites = [n for n, why in chosen if why == "favourite" and (truth[n][1] or 0) < 4]
    record(not wrong_favourites, f"every favourite slide is rated 4 or more ({wrong_favourites[:3]})")

    def median_age(reason):
        ages = sorted((today - truth[n][0].date()).days for n, why in chosen if why == reason)
        return ages[len(ages) // 2] if ages else 0
    record(0 < median_age("recent") * 2 < median_age("round"),
           f"recent picks are younger: median {median_age('recent')} days against the rest's {median_age('round')}")

    # 2. The whole round across the restart, then the next round.
    round_names = names[:PHOTOS]
    record(len(round_names) == PHOTOS and len(set(round_names)) == PHOTOS,
           f"every one of {PHOTOS} photos once before any twice, across the restart "
           f"({len(set(round_names))} different in the first {len(round_names)} slides)")
    record(len(names) > PHOTOS and names[PHOTOS] != names[PHOTOS - 1],
           "the next round begins with another photo than the one that ended the round")
    return harness.summary()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--vitrine", required=True)
    arguments = parser.parse_args()
    VITRINE = os.path.abspath(arguments.vitrine)
    sys.exit(main())

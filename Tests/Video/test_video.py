#!/usr/bin/python3
"""Clips in the show, in the release binary on a headless panel that writes every frame it shows (`--snapshots`),
over a library this script makes with ffmpeg (Tests/Tools/make_clip.py: each picture carries its number as ten
black or white columns, read here off the screen's pixels, never asked of the player):

1. a 3 s 30 fps H.264 clip between two photos plays whole: at least 99 % of its pictures reach the screen, in
   order, each at its time (the screen's clock against the picture's number), and the next photo follows at its
   end, not after the interval;
2. `pause` holds the picture on screen and `resume` goes on from it; `status` names the decoder;
3. a phone's portrait HEVC `.mov` (a display matrix turning it) is shown upright: its pictures match ffmpeg's own
   autorotated decode of the same picture, scaled by Pillow;
4. broken clips (no index, an unknown codec, a picture of 15360x8640 on a board whose budget cannot hold its
   decoder) are each skipped with one line naming the file, and the show goes on;
5. `next` leaves a clip at once;
6. the only clip of a category loops without a gap;
7. a photo arriving in that category ends the loop at the clip's end, and follows it;
8. crossfades into a clip through its first picture and out of it through its last;
9. `vitrine renditions` copies a phone's 60 fps HEVC clip to H.264 at 30 (ffprobe says so, its sound with it),
   leaves an H.264 30 fps clip alone, and the player plays the copy: every other picture of the original, in order.

Prints PASS/FAIL per check and `N passed, M failed`. Usage: test_video.py --vitrine BIN
"""
import argparse
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import record, until  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tools"))
import make_clip  # noqa: E402

try:
    from PIL import Image
except ImportError:
    print("FAIL  PIL is missing (make video-test installs python3-pil)")
    sys.exit(1)

SCREEN = (480, 270)
MAKE_CLIP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tools", "make_clip.py")


def ppm(path):
    """A P6 file as (width, height, bytes)."""
    with open(path, "rb") as f:
        data = f.read()
    parts = data.split(maxsplit=4)
    width, height = int(parts[1]), int(parts[2])
    return width, height, parts[4][-width * height * 3:]


def counter_of(path, box):
    width, _, pixels = ppm(path)

    def pixel(x, y):
        i = (y * width + x) * 3
        return pixels[i], pixels[i + 1], pixels[i + 2]

    return make_clip.read_counter(pixel, box)


def clip(out, **options):
    command = [sys.executable, MAKE_CLIP, out]
    for key, value in options.items():
        command += [f"--{key}", str(value)]
    subprocess.run(command, check=True)


def lines_of(frames):
    try:
        with open(f"{frames}/presented.jsonl") as f:
            return [json.loads(line) for line in f if line.strip() and line.endswith("\n")]
    except (OSError, ValueError):
        return []


def status(sock):
    try:
        return json.loads(harness.ctl(sock, "status"))
    except (OSError, ValueError):
        return {}


def make_library(root):
    show = f"{root}/Show"
    os.makedirs(show)
    Image.new("RGB", (640, 360), (20, 160, 40)).save(f"{show}/a.jpg", quality=92)
    clip(f"{show}/b.mp4", frames=90, size="640x360", fps=30)
    Image.new("RGB", (640, 360), (30, 40, 200)).save(f"{show}/c.jpg", quality=92)
    clip(f"{show}/d_broken.mp4", frames=30, size="320x180")
    with open(f"{show}/d_broken.mp4", "r+b") as f:  # no faststart: the index is at the end, cut away
        f.truncate(os.path.getsize(f"{show}/d_broken.mp4") * 7 // 10)
    clip(f"{show}/e.mov", frames=45, size="640x360", fps=30, codec="libx265", rotate=90)
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=gray:size=15360x8640:d=0.04:r=25",
                    "-frames:v", "1", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
                    f"{show}/f_16k.mp4"], check=True)
    clip(f"{root}/unknown.mkv", frames=10, size="160x90")
    with open(f"{root}/unknown.mkv", "rb") as f:
        data = f.read()
    with open(f"{show}/g_unknown.mkv", "wb") as f:
        f.write(data.replace(b"V_MPEG4/ISO/AVC", b"V_UNKNOWN/CODEC"))
    os.remove(f"{root}/unknown.mkv")
    os.makedirs(f"{root}/Loop")
    clip(f"{root}/Loop/loop.mp4", frames=10, size="320x180", fps=10)


def fades(vitrine, work):
    """8. Crossfades: into a clip through its first picture, out of it through its last (picture 29, whose columns
    are not those of picture 0), into the next photo."""
    library = f"{work}/fades"
    os.makedirs(f"{library}/F")
    Image.new("RGB", (640, 360), (20, 160, 40)).save(f"{library}/F/a.jpg", quality=92)
    clip(f"{library}/F/b.mp4", frames=30, size="640x360", fps=30)
    Image.new("RGB", (640, 360), (30, 40, 200)).save(f"{library}/F/c.jpg", quality=92)
    frames = f"{work}/fade-frames"
    config = f"{work}/fades.json"
    with open(config, "w") as f:
        json.dump({"library": library, "interval": 1, "transition": "fade", "transitionSeconds": 0.5,
                   "controlSocket": f"{work}/fades.sock",
                   "display": {"backend": "headless", "headlessSize": f"{SCREEN[0]}x{SCREEN[1]}"}}, f)
    subprocess.run([vitrine, "play", "--config", config, "--snapshots", frames, "--exit-after", "3"],
                   capture_output=True, timeout=120)
    lines = lines_of(frames)
    into = [line for line in lines if line.get("slide") == "b" and "fade" in line]
    out = [line for line in lines if line.get("slide") == "c" and "fade" in line]
    clip_lines = [line for line in lines if line.get("slide") == "b" and "clip_time" in line]
    first_clip = lines.index(clip_lines[0]) if clip_lines else None
    record(into and first_clip is not None and lines.index(into[-1]) < first_clip,
           f"the clip fades in ({len(into)} steps) before it plays")
    # Halfway out: picture 29's white columns (its bits 0000011101, column 0 first) mixed with the blue
    # photo, its black ones mixed likewise from black.
    middle = min(out, key=lambda line: abs(line["fade"] - 0.5)) if out else None
    if middle:
        weight = middle["fade"]
        width, _, pixels = ppm(f"{frames}/{middle['seq']:06d}.ppm")

        def pixel(bit):
            x, y = int((bit + 0.5) * SCREEN[0] / 10), SCREEN[1] * 3 // 8
            i = (y * width + x) * 3
            return pixels[i], pixels[i + 1], pixels[i + 2]

        white = [round(255 * (1 - weight) + c * weight) for c in (30, 40, 200)]
        black = [round(c * weight) for c in (30, 40, 200)]
        near = lambda got, want: all(abs(g - w) <= 12 for g, w in zip(got, want))  # noqa: E731
        ok = near(pixel(9), white) and near(pixel(7), white) and near(pixel(8), black) and near(pixel(0), black)
        record(ok, f"the fade out of the clip starts from its last picture: at {weight:.2f} a white column is "
                   f"{pixel(9)} (expected {white}), a black one {pixel(8)} (expected {black})")
    else:
        record(False, "the fade out of the clip: no step found")


def renditions(vitrine, work):
    """A phone's 60 fps HEVC clip gets an H.264 copy at 30 from `vitrine renditions`, and the player plays it."""
    library = f"{work}/renditions"
    os.makedirs(f"{library}/R")
    clip(f"{library}/R/p.mov", frames=60, size="640x360", fps=60, codec="libx265", tone=440)
    clip(f"{library}/R/q.mp4", frames=30, size="640x360", fps=30)
    made = subprocess.run([vitrine, "renditions", "--library", library, "--profiles", "hdmi-720p"],
                          capture_output=True, text=True, timeout=120)
    probe = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name,width,height,r_frame_rate",
                            "-of", "csv=p=0", f"{library}/R/p@640x360.mp4"], capture_output=True, text=True)
    streams = probe.stdout.split()
    record(made.returncode == 0 and streams[:1] == ["h264,640,360,30/1"] and any(s.startswith("aac") for s in streams)
           and not any(name.startswith("q@") for name in os.listdir(f"{library}/R")),
           f"vitrine renditions copies the 60 fps HEVC clip to H.264 at 30 with its sound, and leaves the H.264 one: "
           f"{streams} ({made.stdout.strip().splitlines()[-1] if made.stdout.strip() else made.stderr.strip()})")
    frames = f"{work}/rendition-frames"
    config = f"{work}/renditions.json"
    with open(config, "w") as f:
        json.dump({"library": library, "interval": 1, "transition": "none", "controlSocket": f"{work}/r.sock",
                   "display": {"backend": "headless", "headlessSize": f"{SCREEN[0]}x{SCREEN[1]}"}}, f)
    log = f"{work}/renditions.log"
    player = subprocess.Popen([vitrine, "play", "--config", config, "--snapshots", frames],
                              stdout=open(log, "w"), stderr=subprocess.STDOUT)
    try:
        until(lambda: any(line.get("slide") == "q" for line in lines_of(frames)), 30)
    finally:
        player.send_signal(signal.SIGTERM)
        player.wait(timeout=20)
    with open(log) as f:
        said = [line.strip() for line in f if "playing R/p" in line]
    p = [line for line in lines_of(frames) if line.get("slide") == "p" and "clip_time" in line]
    numbers = [counter_of(f"{frames}/{line['seq']:06d}.ppm", (0, 0, SCREEN[0], SCREEN[1])) for line in p]
    record(said and "from p@640x360.mp4: H.264 640x360 30 fps" in said[0] and len(numbers) >= 29
           and all(n % 2 == 0 for n in numbers) and numbers == sorted(numbers),
           f"the player plays the copy: {said[:1]}, pictures {numbers[:4]}...{numbers[-2:]} (every other one of the "
           f"original's 60)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vitrine", required=True)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="vitrine-video-")
    player = None
    try:
        library = f"{work}/library"
        make_library(library)
        frames = f"{work}/frames"
        sock = f"{work}/ctl.sock"
        config = f"{work}/vitrine.json"
        with open(config, "w") as f:
            json.dump({"library": library, "interval": 1.5, "transition": "none", "startCategory": "Show",
                       "controlSocket": sock, "memoryBudgetMiB": 160,
                       "display": {"backend": "headless", "headlessSize": f"{SCREEN[0]}x{SCREEN[1]}"}}, f)
        log = open(f"{work}/player.log", "w")
        player = subprocess.Popen([args.vitrine, "play", "--config", config, "--snapshots", frames],
                                  stdout=log, stderr=subprocess.STDOUT)

        def clip_lines(slide):
            return [line for line in lines_of(frames) if line.get("slide") == slide and "clip_time" in line]

        # 2. Pause a second into b, hold, resume.
        started = until(lambda: len(clip_lines("b")) >= 30, 30)
        record(started, f"the clip plays ({len(clip_lines('b'))} pictures of b.mp4 a second in)")
        # Three commands in one write, as a script sends them: each is answered, in order, and the clip holds.
        answers = harness.ctl_batch(sock, ["status", "pause", "status"])
        paused_answer = answers[1] if len(answers) == 3 else answers
        try:
            first, last = json.loads(answers[0]), json.loads(answers[2])
        except (IndexError, ValueError):
            first, last = {}, {}
        record(len(answers) == 3 and answers[1] == "ok" and (first.get("clip") or {}).get("playing") is True
               and "user" in last.get("paused", []),
               f"status, pause and status in one write are answered in order during the clip: "
               f"{[a[:60] for a in answers]}")

        def held_state():
            state = status(sock)
            return state if (state.get("clip") or {}).get("playing") is False else None

        state = until(held_state, 5) or status(sock)
        # The window starts once the snapshots' lines (written off the player's thread) have caught up with the
        # pictures `status` counts, and a flip already asked for when the pause came has landed.
        until(lambda: len(clip_lines("b")) >= (state.get("clip") or {}).get("presented", 0), 5)
        counts = []

        def settled():
            counts.append(len(clip_lines("b")))
            return len(counts) >= 2 and counts[-1] == counts[-2]
        until(settled, 2, step=0.1)
        held_count = counts[-1]
        # Held means no new picture for a while: the test watches for 0.8 s (the window is the check itself).
        time.sleep(0.8)
        later = len(clip_lines("b"))
        record(later == held_count and "user" in state.get("paused", []) and state.get("clip", {}).get("playing") is False,
               f"pause holds the clip's picture: {held_count} pictures before, {later} 0.8 s later ({paused_answer}; "
               f"paused {state.get('paused')}, status clip {state.get('clip')})")
        decoder = (state.get("clip") or {}).get("decoder") or ""
        record("software" in decoder or "hardware" in decoder or "VA-API" in decoder,
               f"status names the decoder: {decoder!r}")
        harness.ctl(sock, "resume")

        # 1. b plays to its end; c follows.
        until(lambda: any(line.get("slide") == "c" for line in lines_of(frames)), 30)
        lines = lines_of(frames)
        b = [line for line in lines if line.get("slide") == "b"]
        numbers = [counter_of(f"{frames}/{line['seq']:06d}.ppm", (0, 0, SCREEN[0], SCREEN[1])) for line in b]
        distinct = sorted(set(numbers))
        in_order = all(x <= y for x, y in zip(numbers, numbers[1:]))
        record(len(distinct) >= 89 and distinct[-1] == 89 and in_order,
               f"b.mp4: {len(distinct)} of 90 pictures reached the screen, in order (first {numbers[:3]}, "
               f"last {numbers[-3:]})")
        # Each picture at its time: the screen's clock less the picture's time is the same for every picture,
        # but for the pause (which moves it by the time held), to within a frame.
        resumed_at = next((i for i, line in enumerate(b[1:], 1)
                           if line["t"] - b[i - 1]["t"] > 0.5), None)
        spreads = []
        for part in (b[1:resumed_at], b[resumed_at:] if resumed_at else []):
            pairs = [(line["t"], counter_of(f"{frames}/{line['seq']:06d}.ppm", (0, 0, SCREEN[0], SCREEN[1])))
                     for line in part]
            offsets = [t - number / 30 for t, number in pairs]
            if offsets:
                spreads.append(max(offsets) - min(offsets))
        record(spreads and max(spreads) <= 0.05,
               f"each picture is on screen at its time: the clock less the picture's time spreads "
               f"{[round(s * 1000) for s in spreads]} ms (before and after the pause)")
        c = next(line for line in lines if line.get("slide") == "c")
        last_b = b[-1]
        record(0 <= c["t"] - last_b["t"] <= 0.3,
               f"the next photo follows the clip's end ({(c['t'] - last_b['t']) * 1000:.0f} ms after its last "
               f"picture), not the interval")

        # 3. e.mov upright, then `next` leaves it.
        until(lambda: len(clip_lines("e")) >= 10, 30)
        e = clip_lines("e")
        harness.ctl(sock, "next")
        left = until(lambda: any(line.get("slide") == "a" for line in lines_of(frames)[len(lines):]), 5)
        record(left, "next leaves the clip at once")
        if e:
            # The box a 360x640 picture fills on 480x270: 152x270, centred.
            box = (164, 0, 152, 270)
            sample = e[len(e) // 2]
            screen = Image.open(f"{frames}/{sample['seq']:06d}.ppm").convert("RGB")
            truth_number = round(sample["clip_time"] * 30)
            subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", f"{library}/Show/e.mov", "-vf",
                            f"select=eq(n\\,{truth_number})", "-frames:v", "1", f"{work}/e.png"], check=True)
            truth = Image.open(f"{work}/e.png").convert("RGB")
            expected = truth.resize((box[2], box[3]), Image.BICUBIC)
            shown = screen.crop((box[0], box[1], box[0] + box[2], box[1] + box[3]))
            error = sum((a - b) ** 2 for p, q in zip(shown.getdata(), expected.getdata()) for a, b in zip(p, q))
            mse = error / (box[2] * box[3] * 3)
            psnr = 99 if mse == 0 else 10 * math.log10(255 ** 2 / mse)
            record(truth.size == (360, 640) and psnr >= 25,
                   f"the portrait HEVC clip is upright: picture {truth_number} matches ffmpeg's autorotated decode "
                   f"({truth.size[0]}x{truth.size[1]}) at {psnr:.1f} dB")

        # 4. The broken clips: one line each, and the show went on past them.
        with open(f"{work}/player.log") as f:
            text = f.read()
        for name in ("d_broken.mp4", "f_16k.mp4", "g_unknown.mkv"):
            said = [line for line in text.splitlines() if name in line and "skipped" in line]
            record(len(said) == 1, f"{name} is skipped with one line: {said[:1]}")

        # 6. A category of one clip loops without a gap.
        harness.ctl(sock, "category Loop")
        until(lambda: len(clip_lines("loop")) >= 25, 30)
        loop = clip_lines("loop")
        numbers = [counter_of(f"{frames}/{line['seq']:06d}.ppm", (0, 0, SCREEN[0], SCREEN[1])) for line in loop]
        wraps = [i for i in range(1, len(numbers)) if numbers[i] < numbers[i - 1]]
        gaps = [loop[i]["t"] - loop[i - 1]["t"] for i in wraps]
        record(len(wraps) >= 2 and all(numbers[i] == 0 and numbers[i - 1] == 9 for i in wraps)
               and all(g <= 0.15 for g in gaps),
               f"the only clip of a category loops: 9 then 0 at {len(wraps)} wraps, "
               f"{[round(g * 1000) for g in gaps]} ms apart (a picture is 100 ms)")

        # 7. A photo arriving in that category (a copy, as a sync or an upload lands one) ends the loop: the clip
        # plays to its end once more and the photo follows.
        Image.new("RGB", (640, 360), (200, 200, 30)).save(f"{work}/z.jpg", quality=92)
        os.rename(f"{work}/z.jpg", f"{library}/Loop/z.jpg")
        arrived = until(lambda: any(line.get("slide") == "z" for line in lines_of(frames)), 10)
        lines = lines_of(frames)
        z = next((i for i, line in enumerate(lines) if line.get("slide") == "z"), None)
        before = lines[z - 1] if z else {}
        last_number = (counter_of(f"{frames}/{before['seq']:06d}.ppm", (0, 0, SCREEN[0], SCREEN[1]))
                       if before.get("slide") == "loop" else None)
        record(arrived and last_number == 9,
               f"a photo added to the looping clip's category follows the clip's last picture (picture "
               f"{last_number} before it)")
        player.send_signal(signal.SIGTERM)
        player.wait(timeout=20)
        player = None
        fades(args.vitrine, work)
        renditions(args.vitrine, work)
    finally:
        if player:
            player.send_signal(signal.SIGTERM)
            try:
                player.wait(timeout=20)
            except subprocess.TimeoutExpired:
                player.kill()
                record(False, "the player ends on SIGTERM within 20 s")
        if os.environ.get("KEEP") != "1":
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}")
    return harness.summary()


if __name__ == "__main__":
    sys.exit(main())

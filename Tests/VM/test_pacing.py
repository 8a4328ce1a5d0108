#!/usr/bin/python3
"""Frame pacing on a driver with a real vblank: vkms (built out of tree for the test kernel by build_vkms.sh)
in a QEMU guest, whose page flips complete on a 60 Hz timer, as a panel's do. At 640x480 (TCG is slow):

- a 1 s crossfade shows one step per vblank: the player's `--stats` line for each faded slide gives the steps
  it showed and the vblanks the fade took (from the flip events' sequence numbers); under 10 % may be skipped.
  When TCG is too slow here for a blend to fit in a vblank (measured in the same guest with `vitrine bench
  --blend`), each step must still land at the first vblank after it is painted;
- `ctl next` with the next slide prefetched is on screen within two vblanks (the request-to-present time);
- the flip watchdog never fires (no "no page-flip event" line);
- a 10 s 1280x720 30 fps H.264 clip: at least 99 % of its pictures reach the glass, none more than one vblank
  late (the player's own flip completions, nothing else at work in the guest), the next photo follows its end;
  on its next round `status` shows it playing, pause holds it, resume goes on and `next` leaves it;
- its sound (`video.audio`) on snd-aloop, recorded by a client of its own (capture_sound.py): each second's beep
  heard within 40 ms of that second's picture, the clip's frequencies, silence from 50 ms after a pause.

Prints `N passed, M failed`. Without QEMU, a kernel or the module it skips with the reason, except under
CI=true, where that is a failure.

Usage: test_pacing.py [--vitrine PATH]
"""
import json
import math
import os
import re
import subprocess
import sys
import time

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import test_display as display  # noqa: E402
import vm as vmlib  # noqa: E402

record = display.record
VBLANK_MS = 1000 / 60
# The latency may be a little below 0: vkms dates a vblank by when its timer was due, and under TCG the timer may
# run late enough for the flip asked for after the request to be dated just before it.
STATS = re.compile(r"stats: slide (\S+) .*deadline-to-present (-?[0-9.]+|-)( ms)?(?: fade (\d+) steps over (\d+) vblanks)?")


def stats_lines(path):
    with open(path, errors="replace") as f:
        return [m for m in (STATS.search(line) for line in f) if m]


def run(vitrine, module):
    with vmlib.VM(device="none", preload=["drm_kms_helper", "drm_shmem_helper"], insmod=[module], cpus=2) as vm:
        share = vm.share
        os.makedirs(f"{share}/lib/Pace")
        for name, color in (("1-red", (230, 20, 20)), ("2-blue", (20, 40, 220)), ("3-green", (20, 200, 60))):
            Image.new("RGB", (640, 480), color).save(f"{share}/lib/Pace/{name}.jpg", quality=90)
        rc, out = vm.run("cat /sys/class/drm/card0-*/status; cat /sys/class/drm/card0/device/driver/module/srcversion "
                         "2>/dev/null; ls /sys/class/drm")
        record("card0-Virtual-1" in out, f"vkms drives card0 with a Virtual connector ({' '.join(out.split())[:80]})")
        with open(f"{share}/pace.json", "w") as f:
            json.dump({"library": "/share/lib", "deviceTable": f"{REPO}/Config/devices.json", "interval": 1.5,
                       "transition": "fade", "transitionSeconds": 1, "controlSocket": "/tmp/vitrine.sock",
                       "display": {"backend": "drm", "mode": "640x480"}}, f)
        # How long one blend takes in this guest, measured in the same run: TCG's speed here varies by a factor of
        # two from one run to the next. A blend well inside a vblank must give one step per vblank; a slower one
        # must still be flipped at the first vblank after it is painted (every k-th vblank, k the vblanks it takes).
        rc, out = vm.run(f"{vitrine} bench --blend --panel 640x480 --tsv", timeout=120)
        rows = [line.split("\t") for line in out.strip().splitlines() if line.startswith("640x480")]
        blend_ms = float(rows[0][1]) if rc == 0 and rows else None
        record(blend_ms is not None, f"a crossfade step takes {blend_ms} ms in the guest (vitrine bench --blend)")
        vm.spawn("pace", f"exec {vitrine} play --config /share/pace.json --stats")
        log = f"{share}/pace.out"
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and sum(1 for m in stats_lines(log) if m.group(4)) < 4:
            time.sleep(0.2)
        fades = [(int(m.group(4)), int(m.group(5))) for m in stats_lines(log) if m.group(4)]
        record(len(fades) >= 4, f"four crossfades shown, each with its vblank count ({fades})")
        every = 1 if blend_ms is None or blend_ms <= 10 else math.ceil((blend_ms + 2) / VBLANK_MS)
        worst = max((1 - (steps - 1) * every / vblanks for steps, vblanks in fades), default=1.0)
        record(fades and worst < 0.1 and all(50 <= v <= 70 for _, v in fades),
               f"a 1 s crossfade takes about 60 vblanks with a step every {every} vblank(s) (steps, vblanks: "
               f"{fades}; worst {max(worst, 0):.0%} of those missed)")

        # `ctl next` once the next slide is prefetched and no fade runs: request to first step on the glass.
        ctl = f"{vitrine} ctl --control /tmp/vitrine.sock"
        latencies = []
        for _ in range(3):
            # Right after a slide's fade has ended (its stats line), hold the show and wait for the prefetch.
            count = len(stats_lines(log))
            wait_until = time.monotonic() + 10
            while len(stats_lines(log)) == count and time.monotonic() < wait_until:
                time.sleep(0.05)
            vm.run(f"{ctl} pause")
            ready = False
            for _ in range(50):
                rc, out = vm.run(f"{ctl} status")
                state = json.loads(out) if rc == 0 else {}
                if state.get("frames_cached", 0) >= 1:
                    ready = True
                    break
                time.sleep(0.2)
            before = len(stats_lines(log))
            vm.run(f"{ctl} next")
            wait_until = time.monotonic() + 10
            while len(stats_lines(log)) == before and time.monotonic() < wait_until:
                time.sleep(0.2)
            lines = stats_lines(log)
            if ready and len(lines) > before and lines[-1].group(2) != "-":
                latencies.append(float(lines[-1].group(2)))
            vm.run(f"{ctl} resume")
        vblanks = [round(ms / VBLANK_MS, 2) for ms in latencies]
        record(len(latencies) == 3 and max(latencies) <= 2 * VBLANK_MS + 1,
               f"`ctl next` with the next slide prefetched is on screen within two vblanks ({latencies} ms = "
               f"{vblanks} vblanks)")
        status, output = vm.stop("pace")
        record(status == 0 and "no page-flip event" not in output and "page flip refused" not in output,
               f"the flip watchdog never fired and no flip was refused (exit {status})")
        if not all(display.results):
            print(output[-3000:])
        clips(vm, vitrine)


TONE, BEEP = 440, 1000
RATE = 48_000
CLOCK = re.compile(r"stats: clip Clip/2-counter clock: clip time 0 at ([0-9.]+)")
HELD = re.compile(r"stats: clip Clip/2-counter held at ([0-9.]+)")


def wait_for_text(path, text, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if os.path.exists(path):
            with open(path, errors="replace") as f:
                if text in f.read():
                    return True
        time.sleep(0.1)
    return False


class Recording:
    """What capture_sound.py recorded: the left channel, and each sample's time on the guest's monotonic clock. A
    read returns when the device has handed over its samples, so the earliest (time - samples read) of a stretch
    is its clock, the others having woken later."""

    def __init__(self, base):
        with open(base + ".raw", "rb") as f:
            data = f.read()
        self.left = memoryview(data).cast("h")[0::2]
        self.stretches = []  # (first sample, end sample, time of sample 0 of the recording)
        start, best, total = 0, None, 0
        with open(base + ".tsv") as f:
            for line in f:
                words = line.split()
                if words == ["gap"]:
                    if best is not None:
                        self.stretches.append((start, total, best))
                    start, best = total, None
                elif len(words) == 2:
                    now, total = float(words[0]), int(words[1])
                    origin = now - total / RATE
                    best = origin if best is None else min(best, origin)
        if best is not None:
            self.stretches.append((start, total, best))

    def index(self, when):
        """The sample heard at monotonic time `when`, or None where the recording has no sample."""
        for first, end, origin in self.stretches:
            i = round((when - origin) * RATE)
            if first <= i < end:
                return i
        return None

    def time(self, i):
        for first, end, origin in self.stretches:
            if first <= i < end:
                return origin + i / RATE
        return None

    def power(self, i, frequency, n=240):
        """Goertzel power of `frequency` over the n samples from i."""
        k = 2 * math.cos(2 * math.pi * frequency / RATE)
        s1 = s2 = 0.0
        for x in self.left[i:i + n]:
            s1, s2 = x + k * s1 - s2, s1
        return s1 * s1 + s2 * s2 - k * s1 * s2

    def rms(self, start, end):
        a, b = self.index(start), self.index(end)
        if a is None or b is None or b <= a:
            return None
        return math.sqrt(sum(x * x for x in self.left[a:b]) / (b - a))

    def frequency(self, start, end):
        """The frequency by zero crossings between two times."""
        a, b = self.index(start), self.index(end)
        if a is None or b is None or b <= a:
            return None
        crossings = sum(1 for j in range(a + 1, b) if (self.left[j - 1] < 0) != (self.left[j] < 0))
        return crossings / 2 / ((b - a) / RATE)

    def onset(self, near, span=0.3):
        """When the beep starting near `near` was heard: the first 1 ms step from which a 5 ms window holds
        more of the beep's frequency than of the tone's."""
        i = self.index(near - span)
        end = self.index(near + span)
        if i is None or end is None:
            return None
        while i < end:
            beep, tone = self.power(i, BEEP), self.power(i, TONE)
            if beep > 4 * tone and beep > 1e9:
                return self.time(i)
            i += 48
        return None


def sound(share, out):
    """The clip's sound on snd-aloop against its pictures' clock: each whole second's beep heard within 40 ms of
    that second's picture on the glass (the clock the pictures are paced from, `clip time 0 at`), the tone at the
    clip's frequency, and nothing heard while the clip is held."""
    plays = re.search(r"Clip/2-counter: sound (.+)", out)
    record(plays and "plughw:Loopback,0,0" in plays.group(1),
           f"the clip's sound plays on the loopback device ({plays.group(1) if plays else None})")
    clocks = [float(m.group(1)) for m in CLOCK.finditer(out)]
    held = [float(m.group(1)) for m in HELD.finditer(out)]
    recording = Recording(f"{share}/sound")
    if len(clocks) < 3 or not held:
        record(False, f"the player's clock lines are in the log (clocks {clocks}, held {held})")
        return
    anchor = clocks[0]
    spans = [(round(origin + first / RATE, 3), round(origin + end / RATE, 3)) for first, end, origin in
             recording.stretches]
    print(f"      the recording: {len(recording.left) / RATE:.2f} s in {len(spans)} stretch(es) {spans[:4]}")
    offsets = []
    for second in range(1, 10):
        heard = recording.onset(anchor + second)
        offsets.append(None if heard is None else round((heard - (anchor + second)) * 1000, 1))
    found = [o for o in offsets if o is not None]
    record(len(found) == 9 and max(abs(o) for o in found) <= 40,
           f"each second's beep is heard within 40 ms of its picture on the glass (offsets {offsets} ms)")
    # Measured where the sound was heard (its offset from the picture is the check above, not this one's).
    heard = recording.onset(anchor + 3) or anchor + 3
    tone = recording.frequency(heard - 0.7, heard - 0.2)
    beep = recording.frequency(heard + 0.01, heard + 0.09)
    record(tone and beep and abs(tone - TONE) < TONE * 0.03 and abs(beep - BEEP) < BEEP * 0.03,
           f"the sound heard is the clip's: {tone and round(tone)} Hz and {beep and round(beep)} Hz beeps "
           f"(the clip's {TONE} and {BEEP})")
    # The hold, between the clock lines logged before and after it. The resume re-anchors the clock where the
    # hold left the clip (clip time 0 moves by the hold's length), so the resume came at the new clock plus the
    # position the clip was held at. The clock's values are not in log order: a hold shorter than what the clip
    # had played puts the new clip time 0 before the pause.
    where = next(HELD.finditer(out))
    pause = held[0]
    before = [float(m.group(1)) for m in CLOCK.finditer(out, 0, where.start())]
    after = [float(m.group(1)) for m in CLOCK.finditer(out, where.end())]
    begun = before[-1] if before else pause - 0.6
    resume = after[0] + (pause - begun) if before and after else None
    # Without a break: every tenth of a second of the first round, and of the second up to its pause, is heard, also
    # while `ctl status` takes the guest's CPUs and the pictures come late (the sound is read ahead of them).
    first = [recording.rms(t, t + 0.1) for t in frange(anchor + 0.15, anchor + 9.85, 0.1)]
    levels = [recording.rms(t, t + 0.1) for t in frange(begun + 0.15, pause - 0.15, 0.1)]
    quiet = [round(t - anchor, 1) for t, level in zip(frange(anchor + 0.15, anchor + 9.85, 0.1), first)
             if level is None or level < 1000]
    quiet += [round(t - begun, 1) for t, level in zip(frange(begun + 0.15, pause - 0.15, 0.1), levels)
              if level is None or level < 1000]
    record(not quiet and len(first) >= 90 and len(levels) >= 5,
           f"the sound plays without a break: {len(first)} tenths of a second of the first round and {len(levels)} of "
           f"the second before its pause heard (quiet ones at {quiet[:10]} s into their round)")
    playing = max((level for level in levels if level is not None), default=None)
    silent = recording.rms(pause + 0.05, resume - 0.05) if resume else None
    record(playing and silent is not None and playing > 3000 and silent < 0.01 * playing,
           f"the sound stops within 50 ms of a pause and stays off until the resume (level {playing and round(playing)} "
           f"before, {silent and round(silent, 1)} while held; round from {begun:.3f}, held at {pause:.3f}, resumed "
           f"at {resume and round(resume, 3)}; levels before by tenths {[l and round(l) for l in levels][-12:]})")


def frange(start, end, step):
    """start, start + step, ... below end."""
    values = []
    while start < end:
        values.append(start)
        start += step
    return values


CLIP_END = re.compile(r"clip (\S+) ended: (\d+) pictures shown, (\d+) dropped, (\d+) late")


def clips(vm, vitrine):
    """A 10 s 1280x720 30 fps H.264 clip (its pictures numbered, Tests/Tools/make_clip.py) between two photos on
    vkms's vblank: the player's own flip completions say how many pictures reached the glass and how late; pause
    holds it; the photo after it follows at its end; `next` leaves it."""
    share = vm.share
    folder = f"{share}/cliplib/Clip"
    os.makedirs(folder)
    Image.new("RGB", (640, 480), (230, 20, 20)).save(f"{folder}/1-before.jpg", quality=90)
    subprocess.run([sys.executable, f"{REPO}/Tests/Tools/make_clip.py", f"{folder}/2-counter.mp4", "--frames", "300",
                    "--size", "1280x720", "--fps", "30", "--tone", str(TONE), "--beep", str(BEEP)], check=True)
    Image.new("RGB", (640, 480), (20, 40, 220)).save(f"{folder}/3-after.jpg", quality=90)
    with open(f"{share}/clip.json", "w") as f:
        json.dump({"library": "/share/cliplib", "deviceTable": f"{REPO}/Config/devices.json", "interval": 2,
                   "transition": "none", "controlSocket": "/tmp/clip.sock",
                   "display": {"backend": "drm", "mode": "1280x720"},
                   "video": {"audio": True, "audioDevice": "plughw:Loopback,0,0"}}, f)
    rc, out = vm.run(f"{vitrine} bench --clip /share/cliplib/Clip/2-counter.mp4 --panel 1280x720", timeout=180)
    print(out.strip())
    # The sound goes to snd-aloop's playback side; a recorder of its own (libasound through ctypes) takes the
    # capture side from before the player starts to after it stops.
    rc, out = vm.run("modprobe snd-aloop && cat /proc/asound/cards", timeout=60)
    record(rc == 0 and "Loopback" in out, f"snd-aloop gives the guest a loopback sound card ({out.strip()[:80]})")
    vm.spawn("capture", f"exec /usr/bin/python3 {HERE}/capture_sound.py hw:Loopback,1,0 /tmp/sound")
    wait_for_text(f"{share}/capture.out", "ready", 30)
    vm.spawn("clip", f"exec {vitrine} play --config /share/clip.json --stats")
    ctl = f"{vitrine} ctl --control /tmp/clip.sock"

    def status():
        rc, out = vm.run(f"{ctl} status")
        try:
            return json.loads(out) if rc == 0 else {}
        except ValueError:
            return {}

    def until(condition, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            value = condition()
            if value:
                return value
            time.sleep(0.2)
        return condition()

    log = f"{share}/clip.out"

    def logged(text):
        with open(log, errors="replace") as f:
            return text in f.read()

    def ended():
        with open(log, errors="replace") as f:
            return [m for m in (CLIP_END.search(line) for line in f) if m]

    def plays(round):
        with open(log, errors="replace") as f:
            return f.read().count("playing Clip/2-counter") >= round

    # The first round is measured with nothing else at work in the guest: the host only reads the player's log on
    # the share (a `ctl` is a process of its own there, and under TCG its start takes a quarter of a second of
    # the guest's two CPUs). What a `ctl` does to a clip is the second round's business.
    started = until(lambda: plays(1), 40)
    done = until(ended, 60) if started else []
    shown, dropped, late = (int(done[0].group(n)) for n in (2, 3, 4)) if done else (0, 0, 0)
    record(done and shown >= 297 and late == 0,
           f"a 10 s 1280x720 30 fps H.264 clip on a 60 Hz vblank: {shown} of 300 pictures reached the glass "
           f"({dropped} dropped), {late} more than one vblank late, from the player's own flip completions")
    after = until(lambda: status().get("slide") == "3-after", 5)
    record(after, "the photo after the clip follows its end")
    # Round again: status while it plays, pause holds it, `next` leaves it at once.
    again = until(lambda: plays(2), 30)
    if again:
        until(lambda: (status().get("clip") or {}).get("presented", 0) >= 30, 10)
    clip_state = status().get("clip") or {}
    record(again and clip_state.get("playing") and clip_state.get("presented", 0) >= 15,
           f"`status` shows the clip playing ({clip_state})")
    vm.run(f"{ctl} pause")
    until(lambda: (status().get("clip") or {}).get("playing") is False, 5)
    # Asked again: a flip in flight at the pause lands within a vblank, long before a `ctl` answers in the guest.
    first = status().get("clip") or {}
    # Held means no new picture for a while: watched for a second (the window is the check itself).
    time.sleep(1)
    second = (status().get("clip") or {})
    record(first.get("playing") is False and first.get("presented") == second.get("presented"),
           f"pause holds the clip's picture ({first.get('presented')} pictures, and {second.get('presented')} a second "
           f"later)")
    vm.run(f"{ctl} resume")
    resumed = until(lambda: (status().get("clip") or {}).get("presented", 0) > (second.get("presented") or 0), 5)
    vm.run(f"{ctl} next")
    left = until(lambda: status().get("slide") == "3-after", 2)
    record(resumed and left, "`resume` plays the clip on and `next` leaves it")
    rc, out = vm.stop("clip")
    captured = vm.stop("capture")
    copied = vm.run("cp /tmp/sound.raw /tmp/sound.tsv /share/")
    if captured[0] != 0 or copied[0] != 0:
        print(f"      the recorder: {captured}, {copied}")
    for line in out.splitlines():
        if "stats: clip" in line and "late by" in line:
            print("      " + line)
    sound(share, out)
    decoder = re.search(r"decoded by ([^\n]+)", out)
    record(rc == 0 and "no page-flip event" not in out and decoder,
           f"the clip's decoder is named in the log ({decoder.group(1) if decoder else None}), no flip timed out")
    if not all(display.results):
        print(out[-3000:])


def main():
    args = vmlib.arguments(__doc__)
    ok, reason = vmlib.check()
    module = None
    if ok:
        built = subprocess.run([f"{HERE}/build_vkms.sh"], capture_output=True, text=True)
        module = built.stdout.strip().splitlines()[-1] if built.returncode == 0 and built.stdout.strip() else None
        if module is None:
            ok, reason = False, f"vkms.ko could not be built: {built.stderr.strip()[-300:]}"
    if not ok:
        return vmlib.skipped("VM pacing test", reason)
    try:
        run(args.vitrine, module)
    except Exception as error:  # a hung guest fails the run, it does not hang it
        record(False, f"{type(error).__name__}: {error}")
    return display.summary()


if __name__ == "__main__":
    sys.exit(main())

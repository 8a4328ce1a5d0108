#!/usr/bin/python3
"""Two screens from one card, each its own show (`outputs`), on a real kernel: vkms on Debian's newest kernel
(newer_kernel.sh), given a second device through its configfs with two CRTCs, each with its primary plane, encoder
and connector (Virtual-2 and Virtual-3), whose flips complete on each CRTC's own vblank timer. QEMU's virtio-gpu
has a second head too (`max_outputs=2`), but with no display attached QEMU never reports it connected.

- the "menu" output plays only the Menu category at 640x480 every 1.5 s, the "offers" output only Offers at
  800x600 every 2.5 s: the kernel's atomic state shows both CRTCs on, each primary plane on an XR24 framebuffer of
  its screen's size; each plane's own buffer, read through the kernel (GETFB2, MAP_DUMB: test_planes.py's reader),
  holds the photo its show says is on screen, by the colour the test painted into that photo;
- each show keeps its own pace: the gaps between its slides (the player's `--stats` times) are its interval;
- `ctl --output offers pause` pauses only the offers screen (TwoScreensEndToEndTests covers the rest of the
  addressing, headless);
- a touchscreen (uinput, test_input.py's) that a udev rule maps to Virtual-3 (`WL_OUTPUT`, which libinput reports
  as the device's output): a tap pauses the offers show alone;
- Virtual-3 unplugged (configfs status): the offers show holds ("unplugged" among its pause reasons) while the
  menu's goes on; plugged back, the offers show goes on;
- one show on both screens (`mirror`) at 640x480 and 800x600: one decode worker more, for the second size; the
  kernel's state, sampled every ~20 ms, shows both planes flipping to a new framebuffer at the same moments; both
  planes' own buffers hold the photo the show has on screen; the first screen unplugged, the show goes on on the
  other;
- a small board: the guest has 256 MB of RAM, and a last round plays both screens at 1920x1080 from 12 MP JPEGs
  (four slides each, nothing skipped): the frames and decodes stay within the one budget, the player's peak RSS
  within the budget plus what it took before its first photo, and the kernel kills nothing.

Prints `N passed, M failed`. Without QEMU, the newer kernel or its vkms it skips with the reason, except under
CI=true, where that is a failure.

Usage: test_screens.py [--vitrine PATH]
"""
import json
import os
import re
import sys

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import test_display as display  # noqa: E402  (puts Tests/ on the path for harness)
import harness  # noqa: E402  (Tests/harness.py)
import test_input  # noqa: E402
import test_planes as planes  # noqa: E402
import vm as vmlib  # noqa: E402

record = display.record
STATS = re.compile(r"stats: slide (\w+)/(\d) .* at ([0-9.]+)")
# A vkms device with two CRTCs, each with a primary plane, an encoder and a connector (Documentation/gpu/vkms.rst).
TWO_SCREENS = """
set -e
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
d=/sys/kernel/config/vkms/two
mkdir $d
for i in 0 1; do
  mkdir $d/crtcs/crtc$i $d/planes/primary$i $d/encoders/encoder$i $d/connectors/connector$i
  echo 1 > $d/planes/primary$i/type
  ln -s $d/crtcs/crtc$i $d/planes/primary$i/possible_crtcs/
  ln -s $d/crtcs/crtc$i $d/encoders/encoder$i/possible_crtcs/
  ln -s $d/encoders/encoder$i $d/connectors/connector$i/possible_encoders/
done
echo 1 > $d/enabled
"""
# The colour of each photo: the category's hue, brighter with the number.
COLOURS = {(category, n): tuple(min(255, c + 40 * n) for c in base)
           for category, base in (("Menu", (150, 20, 20)), ("Offers", (20, 20, 150))) for n in range(3)}


def make_library(share):
    for (category, n), colour in COLOURS.items():
        os.makedirs(f"{share}/lib/{category}", exist_ok=True)
        Image.new("RGB", (1024, 768), colour).save(f"{share}/lib/{category}/{n}.png")
    os.makedirs(f"{share}/lib/Other")
    Image.new("RGB", (1024, 768), (0, 200, 0)).save(f"{share}/lib/Other/green.png")


def plane_centres(vm, primaries):
    """Each primary plane's size and the colour at its centre, read from its own buffer through the kernel
    (test_planes.py's reader); None when the read failed."""
    rc, out = vm.run("rm -rf /share/dump; mkdir /share/dump; CARD=/dev/dri/card1 /usr/bin/python3 "
                     "/share/planes.py /share/dump " + " ".join(map(str, primaries)), timeout=60)
    if rc != 0:
        return None
    with open(f"{vm.share}/dump/planes.json") as f:
        meta = json.load(f)
    centres = {}
    for plane in primaries:
        info = meta[str(plane)]
        with open(f"{vm.share}/dump/plane-{plane}.raw", "rb") as f:
            raw = f.read()
        middle = (info["height"] // 2) * info["pitches"][0] + (info["width"] // 2) * 4
        b, g, r = raw[middle:middle + 3]
        centres[plane] = (f"{info['width']}x{info['height']}", (r, g, b))
    return centres


def run(vitrine):
    with vmlib.VM(device="none", preload=["vkms"], cpus=2, newer=True, memory_mb=256) as vm:
        share = vm.share
        with open(f"{share}/two.sh", "w") as f:
            f.write(TWO_SCREENS)
        with open(f"{share}/planes.py", "w") as f:
            f.write(planes.PLANE_READER)
        rc, out = vm.run("sh /share/two.sh && ls /sys/class/drm && cat /sys/class/drm/card1-Virtual-*/status")
        record(rc == 0 and out.count("connected") == 2,
               f"vkms's configfs makes a card with two connected screens ({' '.join(out.split())[:120]})")
        make_library(share)
        with open(f"{share}/two.json", "w") as f:
            json.dump({"library": "/share/lib", "deviceTable": f"{REPO}/Config/devices.json", "transition": "none",
                       "controlSocket": "/tmp/two.sock", "display": {"backend": "drm", "device": "/dev/dri/card1"},
                       "outputs": [
                           {"name": "menu", "connector": "Virtual-2", "categories": ["Menu"], "interval": 1.5,
                            "mode": "640x480"},
                           {"name": "offers", "connector": "Virtual-3", "categories": ["Offers"], "interval": 2.5,
                            "mode": "800x600"}]}, f)
        vm.run("mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug")
        # A touchscreen fixed to the offers screen, as a kiosk's installer would map it; udevd tags input devices
        # for libinput.
        rc, out = vm.run(
            "mkdir -p /etc/udev/rules.d && echo 'SUBSYSTEM==\"input\", ENV{ID_INPUT_TOUCHSCREEN}==\"1\", "
            "ENV{WL_OUTPUT}=\"Virtual-3\"' > /etc/udev/rules.d/99-offers-touch.rules && "
            "/lib/systemd/systemd-udevd --daemon && udevadm settle -t 20", timeout=60)
        record(rc == 0, f"udevd runs in the guest with a rule mapping touchscreens to Virtual-3 ({out.strip()[-80:]})")
        vm.spawn("player", f"exec {vitrine} play --config /share/two.json --stats")

        def text():
            with open(f"{share}/player.out", errors="replace") as f:
                return f.read()

        def slides(category):
            return [(int(n), float(at)) for c, n, at in STATS.findall(text()) if c == category]

        def ctl(command):
            rc, out = vm.run(f"{vitrine} ctl --control /tmp/two.sock {command}")
            return out.strip()

        harness.until(lambda: len(slides("Menu")) >= 4 and len(slides("Offers")) >= 3, 60)
        rc, state = vm.run("cat /sys/kernel/debug/dri/1/state")
        crtcs = re.findall(r"crtc\[\d+\]: crtc-\d\n\tenable=(\d)\n\tactive=(\d)", state)
        sizes = sorted(re.findall(r"format=XR24.*?\n.*?size=(\d+x\d+)", state, re.S))
        record(crtcs == [("1", "1"), ("1", "1")] and sizes == ["640x480", "800x600"],
               f"the kernel's state: both CRTCs on ({crtcs}), each primary plane on an XR24 framebuffer of its "
               f"screen's size ({sizes})")
        primaries = [int(p) for p in re.findall(r"plane\[(\d+)\]: plane-\d\n\tcrtc=crtc-\d", state)]

        menu, offers = slides("Menu"), slides("Offers")
        gaps = {"Menu": [b - a for (_, a), (_, b) in zip(menu[1:], menu[2:])],
                "Offers": [b - a for (_, a), (_, b) in zip(offers[1:], offers[2:])]}
        record(gaps["Menu"] and gaps["Offers"] and all(abs(g - 1.5) < 0.2 for g in gaps["Menu"])
               and all(abs(g - 2.5) < 0.2 for g in gaps["Offers"]),
               f"each show keeps its own interval: menu {[round(g, 2) for g in gaps['Menu']]} s (1.5), offers "
               f"{[round(g, 2) for g in gaps['Offers']]} s (2.5)")
        other = [c for c, _, _ in STATS.findall(text()) if c not in ("Menu", "Offers")]
        record(not other, f"each screen shows only its output's categories (others shown: {other})")

        # What each plane scans out, against the photo its show says is on screen, both shows paused meanwhile (a
        # read takes longer than an interval in the guest); read again if a slide changed all the same.
        ctl("pause")
        matched = {}
        for attempt in range(5):
            before = {name: json.loads(ctl(f"--output {name} status") or "{}") for name in ("menu", "offers")}
            centres = plane_centres(vm, primaries)
            after = {name: json.loads(ctl(f"--output {name} status") or "{}") for name in ("menu", "offers")}
            if centres is None or any(before[n].get("slide") != after[n].get("slide") for n in before):
                continue
            for size, colour in centres.values():
                name = "menu" if size == "640x480" else "offers"
                status = after[name]
                expected = COLOURS.get((status.get("category"), int(status.get("slide") or -1)))
                matched[name] = (expected is not None and all(abs(x - y) <= 2 for x, y in zip(colour, expected)),
                                 f"{status.get('category')}/{status.get('slide')} {expected} on a {size} plane "
                                 f"reads {colour}")
            break
        ctl("resume")
        record(len(matched) == 2 and all(ok for ok, _ in matched.values()),
               f"each plane's own buffer holds the photo its show says is on screen ({[m for _, m in matched.values()]})")

        # Unplugged: the offers show holds, the menu's goes on.
        vm.run("echo 2 > /sys/kernel/config/vkms/two/connectors/connector1/status")
        held = harness.until(lambda: "unplugged" in ctl("--output offers status"), 10)
        count = len(slides("Offers"))
        menu_before = len(slides("Menu"))
        moved = harness.until(lambda: len(slides("Menu")) >= menu_before + 2, 10)
        record(held and moved and len(slides("Offers")) == count and "Virtual-3 disconnected" in text(),
               f"Virtual-3 unplugged: the offers show holds (paused: {json.loads(ctl('--output offers status') or '{}').get('paused')}), "
               f"the menu's goes on ({len(slides('Menu')) - menu_before} slides meanwhile)")
        vm.run("echo 1 > /sys/kernel/config/vkms/two/connectors/connector1/status")
        back = harness.until(lambda: len(slides("Offers")) >= count + 1, 15)
        record(back and "Virtual-3 connected again" in text(),
               f"plugged back, the offers show goes on ({len(slides('Offers')) - count} slides since)")

        # Commands: addressed to one output, or to both.
        menu_count, offers_count = len(slides("Menu")), len(slides("Offers"))
        answer = ctl("--output offers pause")
        paused_offers = json.loads(ctl("--output offers status") or "{}").get("paused", [])
        paused_menu = json.loads(ctl("--output menu status") or "{}").get("paused", [])
        record(answer == "ok" and "user" in paused_offers and "user" not in paused_menu,
               f"`ctl --output offers pause` pauses only the offers screen (offers {paused_offers}, menu {paused_menu})")
        ctl("resume")

        # A tap on the touchscreen mapped to Virtual-3 pauses the offers show alone.
        touch = test_input.Touchscreen(vm)
        touch.send("tap 0.5,0.5")
        paused = harness.until(lambda: "user" in json.loads(ctl("--output offers status") or "{}").get("paused", []), 10)
        paused_menu = json.loads(ctl("--output menu status") or "{}").get("paused", [])
        record(paused and "user" not in paused_menu,
               f"a tap on the touchscreen mapped to Virtual-3 pauses the offers show alone (menu paused: {paused_menu})")
        touch.unplug()
        rc, out = vm.stop("player")
        record(rc == 0 and "no page-flip event" not in out,
               f"the player stopped cleanly, no flip watchdog on either screen (exit {rc})")
        if not all(display.results):
            print(out[-3000:])
        check_mirror(vm, vitrine, primaries)
        check_small_board(vm, vitrine)


# Samples the two primary planes' framebuffers in the kernel's atomic state for a while: each slide is a flip to the
# other scanout buffer, so the moments each plane's framebuffer changes are the moments its screen changed picture.
FLIP_SAMPLER = """
import re, sys, time
planes = sys.argv[1:]
pattern = re.compile(r"plane\\[(\\d+)\\]: [^\\n]*\\n\\tcrtc=[^\\n]*\\n\\tfb=(\\d+)")
end = time.monotonic() + 7
while time.monotonic() < end:
    with open("/sys/kernel/debug/dri/1/state") as f:
        fbs = dict(pattern.findall(f.read()))
    print(round(time.monotonic(), 3), *(fbs.get(p, "0") for p in planes), flush=True)
    time.sleep(0.02)
"""


def check_mirror(vm, vitrine, primaries):
    """One show on both screens (`mirror`) at two sizes: the same photo on both planes, changed together; the
    first screen unplugged, the show goes on on the other."""
    share = vm.share
    with open(f"{share}/mirror.json", "w") as f:
        json.dump({"library": "/share/lib", "deviceTable": f"{REPO}/Config/devices.json", "transition": "none",
                   "controlSocket": "/tmp/mirror.sock", "display": {"backend": "drm", "device": "/dev/dri/card1"},
                   "mirror": True, "startCategory": "Menu", "interval": 1.5,
                   "outputs": [{"name": "left", "connector": "Virtual-2", "mode": "640x480"},
                               {"name": "right", "connector": "Virtual-3", "mode": "800x600"}]}, f)
    with open(f"{share}/flips.py", "w") as f:
        f.write(FLIP_SAMPLER)
    vm.spawn("mirror", f"exec {vitrine} play --config /share/mirror.json --stats")

    def text():
        with open(f"{share}/mirror.out", errors="replace") as f:
            return f.read()

    def ctl(command):
        rc, out = vm.run(f"{vitrine} ctl --control /tmp/mirror.sock {command}")
        return out.strip()

    def shown():
        return len(STATS.findall(text()))

    harness.until(lambda: shown() >= 2, 60)
    record("pictures for 800x600 screens are decoded on a worker of their own" in text()
           and text().count("decoded on a worker of their own") == 1,
           "mirror at 640x480 and 800x600: one more decode worker, for the 800x600 screen")

    # The moments each plane changed picture, from the kernel's state sampled every ~20 ms.
    rc, out = vm.run("/usr/bin/python3 /share/flips.py " + " ".join(map(str, primaries)), timeout=60)
    samples = [line.split() for line in out.splitlines() if len(line.split()) == 3]
    changes = {0: [], 1: []}
    for before, after in zip(samples, samples[1:]):
        for i in (0, 1):
            if before[i + 1] != after[i + 1]:
                changes[i].append(float(after[0]))
    gaps = [round(abs(a - b), 3) for a, b in zip(changes[0], changes[1])]
    record(len(samples) > 50 and len(changes[0]) >= 3 and len(changes[0]) == len(changes[1])
           and all(g <= 0.1 for g in gaps),
           f"both screens change picture together: {len(changes[0])} and {len(changes[1])} flips in 7 s, apart by "
           f"{gaps} s ({len(samples)} samples of the kernel's state)")

    # Both planes' own buffers hold the photo the show has on screen.
    ctl("pause")
    result = (False, "no read")
    for attempt in range(5):
        before = json.loads(ctl("status") or "{}")
        centres = plane_centres(vm, primaries)
        after = json.loads(ctl("status") or "{}")
        if centres is None or before.get("slide") != after.get("slide"):
            continue
        expected = COLOURS.get((after.get("category"), int(after.get("slide") or -1)))
        read = dict(centres.values())
        right = [o for o in after.get("outputs", []) if o.get("name") == "right"]
        ok = (expected is not None and sorted(read) == ["640x480", "800x600"]
              and all(all(abs(x - y) <= 2 for x, y in zip(c, expected)) for c in read.values())
              and right and right[0].get("slide") == after.get("slide"))
        result = (ok, f"{after.get('category')}/{after.get('slide')} {expected}: planes read {read}; status of "
                      f"the right screen: {right[0].get('slide') if right else None}")
        break
    ctl("resume")
    record(result[0], f"both planes' own buffers hold the photo the show has on screen ({result[1]})")

    # The first screen unplugged: the show goes on on the other; plugged back, both show it.
    vm.run("echo 2 > /sys/kernel/config/vkms/two/connectors/connector0/status")
    gone = harness.until(lambda: "Virtual-2 disconnected" in text(), 10)
    count = shown()
    moved = harness.until(lambda: shown() >= count + 2, 10)
    paused = json.loads(ctl("status") or "{}").get("paused")
    record(gone and moved and "unplugged" not in (paused or []),
           f"the first screen unplugged, the show goes on on the other ({shown() - count} slides meanwhile; "
           f"paused: {paused})")
    vm.run("echo 1 > /sys/kernel/config/vkms/two/connectors/connector0/status")
    back = harness.until(lambda: "Virtual-2 connected again" in text(), 15)
    rc, out = vm.stop("mirror")
    record(back and rc == 0 and "no page-flip event" not in out,
           f"plugged back, and the player stopped cleanly (exit {rc})")
    if not all(display.results):
        print(out[-3000:])


def detailed_photo(path, size, seed, colour):
    """A photo with detail everywhere (noise over the colour), so it is as big a JPEG as a phone's."""
    noise = Image.effect_noise((size[0] // 4, size[1] // 4), 50).convert("RGB").resize(size)
    Image.blend(Image.new("RGB", size, colour), noise, 0.3).save(path, quality=92)


def check_small_board(vm, vitrine):
    """Both screens at 1920x1080 from 12 MP photos in a 256 MB guest."""
    share = vm.share
    for category, colour in (("Menu", (160, 40, 40)), ("Offers", (40, 40, 160))):
        os.makedirs(f"{share}/big/{category}")
        for n in range(2):
            detailed_photo(f"{share}/big/{category}/{n}.jpg", (4000, 3000), n, colour)
    with open(f"{share}/big.json", "w") as f:
        json.dump({"library": "/share/big", "deviceTable": f"{REPO}/Config/devices.json", "transition": "none",
                   "interval": 1, "controlSocket": "/tmp/big.sock",
                   "display": {"backend": "drm", "device": "/dev/dri/card1"},
                   "outputs": [
                       {"name": "menu", "connector": "Virtual-2", "categories": ["Menu"], "mode": "1920x1080"},
                       {"name": "offers", "connector": "Virtual-3", "categories": ["Offers"], "mode": "1920x1080"}]},
                  f)
    vm.spawn("big", f"exec {vitrine} play --config /share/big.json --stats")

    def text():
        with open(f"{share}/big.out", errors="replace") as f:
            return f.read()
    harness.until(lambda: all(len(re.findall(rf"stats: slide {c}/", text())) >= 4 for c in ("Menu", "Offers")), 240)
    rc, out = vm.stop("big")
    shown = {c: len(re.findall(rf"stats: slide {c}/", out)) for c in ("Menu", "Offers")}
    skipped = [line for line in out.splitlines() if "skipped" in line or "refused" in line]
    used = [float(v) for v in re.findall(r" budget ([0-9.]+)/", out)]
    limit = re.search(r"budget [0-9.]+/([0-9.]+) MiB", out)
    limit_mib = float(limit.group(1)) if limit else 0.0
    started = re.search(r"stats: started rss [0-9.]+ MiB anon [0-9.]+ MiB peak ([0-9.]+) MiB", out)
    peak = max([float(v) for v in re.findall(r" peak ([0-9.]+) MiB", out)] or [0.0])
    rc2, kernel_log = vm.run("dmesg | grep -iE 'out of memory|oom-kill|killed process' || true")
    record(rc == 0 and min(shown.values()) >= 4 and not skipped,
           f"256 MB guest, two 1920x1080 screens from 12 MP photos: {shown} slides shown, none skipped "
           f"({skipped[:2]}; exit {rc})")
    shares = re.search(r"memory budget [0-9.]+ MiB shared by the screens: (.*)", out)
    record(bool(used) and max(used) <= limit_mib and kernel_log.strip() == "" and shares is not None,
           f"frames and decodes within the one budget: at most {max(used) if used else 0:.1f} of {limit_mib:.1f} "
           f"MiB, split {shares.group(1) if shares else None}; no OOM kill ({kernel_log.strip()[:120]})")
    idle = float(started.group(1)) if started else 0.0
    record(started is not None and peak <= limit_mib + idle,
           f"peak RSS {peak:.1f} MiB <= the budget {limit_mib:.1f} MiB + the player before its first photo "
           f"{idle:.1f} MiB")


if __name__ == "__main__":
    sys.exit(planes.main_on_newer_kernel(__doc__, "VM two-screens test", run))

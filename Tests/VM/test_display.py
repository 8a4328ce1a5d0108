#!/usr/bin/python3
"""Vitrine on real kernel DRM drivers: boots a guest per panel (virtio-gpu and bochs, four sizes each), plays a
library generated here with the release binary, and checks screendumps against `vitrine render` of the same
photos: the right picture, the show advancing on its timer, no frame mixing two pictures while slides change
every 0.2 s, clean crossfade steps at 1920x1080, a library of PNG, WebP, HEIC and AVIF files on virtio-gpu at
1920x1080, the clock over the photo on a 1080x1920 portrait panel (its minute a flip, not a modeset) and on a
16-bit framebuffer (the kernel's vfb, BGR565), clips (a 720p H.264 MP4 at 1024x600, an HEVC .mov on the portrait
panel) whose numbered pictures advance on screen at the clip's rate, a 1080p 120 fps HEVC clip too slow for the guest
skipped with one line before it is shown, a clip switched away from on VT 1 and back, readiness and watchdog notifications, `vitrine probe` naming the connector, mode and profile, and the console back after SIGTERM with
exit status 0. Prints `N passed, M failed`; skips (exit 0) with the reason when QEMU or a kernel is missing.

Usage: test_display.py [--vitrine PATH] [--only DEVICE:WxH ...]
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from PIL import Image, ImageChops, ImageDraw, ImageStat

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import vm as vmlib  # noqa: E402
# The other VM tests reach these through this module (display.record, display.until, display.summary).
from harness import record, results, summary  # noqa: E402, F401  (Tests/harness.py)
from harness import until_done as until  # noqa: E402

# bochs is not run at 1080x1920: a portrait mode is the same to it as any other, and virtio-gpu's portrait panel
# carries the portrait checks.
PANELS = [("virtio", 800, 480), ("virtio", 1024, 600), ("virtio", 1080, 1920), ("virtio", 1920, 1080),
          ("bochs", 800, 480), ("bochs", 1024, 600), ("bochs", 1920, 1080)]
# Photos of different shapes with structure (quadrants, a diagonal, a frame), so a wrong placement, orientation
# or scale shows as a low PSNR, and any two differ everywhere.
PHOTOS = [("01-landscape.jpg", (1600, 1000), [(200, 40, 40), (40, 160, 60), (30, 60, 200), (230, 210, 40)]),
          ("02-portrait.jpg", (900, 1400), [(40, 200, 210), (210, 40, 190), (250, 250, 250), (20, 20, 20)]),
          ("03-square.jpg", (1200, 1200), [(250, 140, 20), (90, 40, 160), (120, 200, 120), (200, 200, 90)])]

def make_library(folder):
    os.makedirs(f"{folder}/lib/Test")
    for name, (w, h), colors in PHOTOS:
        image = Image.new("RGB", (w, h))
        draw = ImageDraw.Draw(image)
        for i, color in enumerate(colors):
            x, y = (i % 2) * w // 2, (i // 2) * h // 2
            draw.rectangle([x, y, x + w // 2, y + h // 2], fill=color)
        draw.line([(0, 0), (w, h)], fill=(255, 255, 255), width=max(4, w // 60))
        draw.rectangle([0, 0, w - 1, h - 1], outline=(255, 0, 0), width=max(4, w // 80))
        image.save(f"{folder}/lib/Test/{name}", quality=92)


def psnr(a, b):
    if a.size != b.size:
        return 0.0
    stat = ImageStat.Stat(ImageChops.difference(a.convert("RGB"), b.convert("RGB")).point(lambda v: v * v))
    mse = sum(stat.mean) / 3
    return 99.0 if mse == 0 else 10 * math.log10(255 * 255 / mse)


def halves_match(dump, reference):
    """PSNR of the top and bottom halves separately: a torn frame has one half of another picture."""
    w, h = dump.size
    top = psnr(dump.crop((0, 0, w, h // 2)), reference.crop((0, 0, w, h // 2)))
    bottom = psnr(dump.crop((0, h // 2, w, h)), reference.crop((0, h // 2, w, h)))
    return min(top, bottom)


def render(vitrine, photo, w, h, folder):
    out = f"{folder}/ref-{os.path.basename(photo)}-{w}x{h}.ppm"
    subprocess.run([vitrine, "render", photo, "--panel", f"{w}x{h}", "--fit", "contain", "--output", out],
                   check=True, capture_output=True)
    return Image.open(out).convert("RGB")


def wait_for(vm, predicate, timeout):
    """Screendumps until predicate(dump) holds; returns the last dump and whether it held."""
    deadline = time.monotonic() + timeout
    dump = vm.screendump()
    while not predicate(dump) and time.monotonic() < deadline:
        time.sleep(0.25)
        dump = vm.screendump()
    return dump, predicate(dump)


def play_config(share, interval, transition="none"):
    with open(f"{share}/vitrine.json", "w") as f:
        f.write('{"library": "/share/lib", "deviceTable": "%s/Config/devices.json", "interval": %s, '
                '"transition": "%s", "controlSocket": "/tmp/vitrine.sock", "display": {"backend": "drm"}}\n'
                % (REPO, interval, transition))


def check_service(vm, vitrine, label, references):
    """The systemd protocol without systemd: a stand-in notification socket in the guest receives READY once the
    photo is up, then WATCHDOG pings every WATCHDOG_USEC/2; a player stopped with SIGSTOP (a hang, as the watchdog
    sees it) sends none until it runs again; STOPPING comes at the end."""
    play_config(vm.share, 3)
    vm.spawn("notify", f"exec /usr/bin/python3 -u {HERE}/notify_listener.py /tmp/notify.sock")
    vm.run("while ! grep -q LISTENING /share/notify.out 2>/dev/null; do sleep 0.1; done", timeout=30)
    vm.spawn("service", f"exec env NOTIFY_SOCKET=/tmp/notify.sock WATCHDOG_USEC=2000000 {vitrine} play "
                        f"--config /share/vitrine.json")
    _, ok = wait_for(vm, lambda d: psnr(d, references[0]) >= 40, 60)
    record(ok, f"{label}: under a notify socket the player shows the first photo")
    time.sleep(4)
    vm.run("kill -STOP $(cat /share/service.pid); sleep 4; kill -CONT $(cat /share/service.pid)", timeout=30)
    time.sleep(4)
    status, output = vm.stop("service")
    time.sleep(1)
    vm.stop("notify")
    with open(f"{vm.share}/notify.out") as f:
        lines = [line.split(" ", 1) for line in f.read().splitlines() if " " in line]
    messages = [(float(t), text) for t, text in lines if text != "LISTENING"]
    ready = [text for _, text in messages if "READY=1" in text]
    record(len(ready) == 1 and "STATUS=playing /share/lib" in ready[0],
           f"{label}: READY=1 arrives once, with a status line ({ready[:1]})")
    pings = [t for t, text in messages if text == "WATCHDOG=1"]
    gaps = [b - a for a, b in zip(pings, pings[1:])]
    long_gaps = [g for g in gaps if g > 1.6]
    record(len(pings) >= 8 and len(long_gaps) == 1 and 3.5 <= long_gaps[0] <= 6,
           f"{label}: WATCHDOG=1 every ~1 s ({len(pings)} pings), none for the {long_gaps[:1] and round(long_gaps[0], 1)} s "
           f"the player was stopped")
    record(any("STOPPING=1" in text for _, text in messages) and status == 0,
           f"{label}: STOPPING=1 on SIGTERM and exit status 0 (got {status})")
    if status != 0:
        print(output[-2000:])


def check_hotplug(vm, vitrine, label, references):
    """A cable pulled and plugged back: the connector is forced off (then back to detection) through sysfs, and
    card0 announces a change the way the kernel does on a real hotplug (6.1 sends no uevent for the sysfs write
    itself, and QEMU's virtual panels cannot be unplugged). Unplugged, the show holds; back, the picture returns."""
    play_config(vm.share, 2)
    vm.spawn("plug", f"exec {vitrine} play --config /share/vitrine.json")
    wait_for(vm, lambda d: psnr(d, references[0]) >= 40, 60)
    status = f"{vitrine} ctl --control /tmp/vitrine.sock status"
    plug = "/sys/class/drm/card0-Virtual-1/status"
    announce = "echo change > /sys/class/drm/card0/uevent"
    def status_until(text, timeout=15):
        """The status, asked until it contains `text` (udev and the player take their time under TCG)."""
        deadline = time.monotonic() + timeout
        while True:
            rc, out = vm.run(status)
            if text in out or time.monotonic() > deadline:
                return out
            time.sleep(0.2)

    vm.run(f"echo off > {plug}; {announce}")
    out = status_until('"paused":["unplugged"]')
    record('"paused":["unplugged"]' in out,
           f"{label}: unplugging the screen holds the show for its own reason ({out.strip()[:120]})")
    vm.run(f"echo detect > {plug}; {announce}")
    out = status_until('"paused":[]')
    record('"paused":[]' in out, f"{label}: plugging it back resumes the show ({out.strip()[:120]})")
    dump, ok = wait_for(vm, lambda d: max(psnr(d, r) for r in references) >= 40, 20)
    record(ok, f"{label}: a whole photo is on screen after the plug")
    status, output = vm.stop("plug")
    if not ok or status != 0:
        print(output[-2000:])

    # Started while nothing is connected: it waits (blocked, not spinning) and shows the photo once plugged in.
    vm.run(f"echo off > {plug}")
    vm.spawn("late", f"exec {vitrine} play --config /share/vitrine.json")
    vm.run("for i in $(seq 150); do grep -q 'waiting for one' /share/late.out && break; sleep 0.2; done", timeout=40)
    rc, out = vm.run("cat /share/late.out; grep -E '^State|^voluntary' /proc/$(cat /share/late.pid)/status")
    record("waiting for one to be plugged in" in out and "(sleeping)" in out,
           f"{label}: with no screen connected vitrine waits asleep ({out.strip().splitlines()[-3:]})")
    # A reload while waiting is no reason to end (SIGHUP's default would be).
    vm.run("kill -HUP $(cat /share/late.pid)")
    rc, out = vm.run("for i in $(seq 100); do grep -q 'SIGHUP while waiting' /share/late.out && break; sleep 0.1; done; "
                     "kill -0 $(cat /share/late.pid) && echo alive", timeout=30)
    record("alive" in out, f"{label}: SIGHUP while waiting for a screen leaves the player waiting")
    vm.run(f"echo detect > {plug}; {announce}")
    dump, ok = wait_for(vm, lambda d: psnr(d, references[0]) >= 40, 60)
    record(ok, f"{label}: the first photo shows once the screen is plugged in (PSNR {psnr(dump, references[0]):.1f})")
    vm.stop("late")

    # SIGTERM while waiting (a service stopped before the TV came on): a clean stop, exit 0.
    vm.run(f"echo off > {plug}")
    vm.spawn("waiting", f"exec {vitrine} play --config /share/vitrine.json")
    vm.run("for i in $(seq 150); do grep -q 'waiting for one' /share/waiting.out && break; sleep 0.2; done",
           timeout=40)
    status, output = vm.stop("waiting")
    record(status == 0 and "while waiting for a screen" in output,
           f"{label}: SIGTERM while waiting for a screen stops the player with status 0 (got {status})")
    vm.run(f"echo detect > {plug}; {announce}")


def check_fbdev(vm, vitrine, label, references, console):
    """The fbdev fallback on the DRM driver's emulated /dev/fb0: the same picture, and the console back after."""
    play_config(vm.share, 3)
    vm.spawn("fb", f"exec {vitrine} play --config /share/vitrine.json --display fbdev:/dev/fb0")
    dump, ok = wait_for(vm, lambda d: psnr(d, references[0]) >= 40, 60)
    record(ok, f"{label}: fbdev shows the first photo as vitrine render does (PSNR {psnr(dump, references[0]):.1f})")
    # Screen off and on while paused: the picture must come back (nothing new will be drawn to repaint it). The
    # pause sign is drawn at the bottom; the rest of the picture is compared.
    w, h = references[0].size

    def upper(image):
        return image.crop((0, 0, w, h * 3 // 4))

    ctl = f"{vitrine} ctl --control /tmp/vitrine.sock"
    # The picture the pause holds (the timer may have moved the show on before the pause took effect).
    vm.run(f"{ctl} pause; for i in $(seq 50); do {ctl} status | grep -q '\"user\"' && break; sleep 0.2; done",
           timeout=30)
    held, ok = wait_for(vm, lambda d: max(psnr(upper(d), upper(r)) for r in references) >= 40, 10)
    vm.run(f"{ctl} screen off")
    rc, dpms = vm.run("for i in $(seq 50); do s=$(cat /sys/class/drm/card0-*/dpms); [ $s = Off ] && break; sleep 0.2; "
                      "done; echo $s", timeout=30)
    record(dpms.strip() == "Off", f"{label}: fbdev `screen off` blanks the output through FBIOBLANK (DPMS {dpms.strip()})")
    vm.run(f"{ctl} screen on")
    dump, back = wait_for(vm, lambda d: psnr(upper(d), upper(held)) >= 40, 10)
    record(ok and back, f"{label}: fbdev `screen on` while paused brings the picture back "
                        f"(PSNR {psnr(upper(dump), upper(held)):.1f})")
    status, output = vm.stop("fb")
    record(status == 0, f"{label}: fbdev player ends with status 0 on SIGTERM (got {status})")
    after, ok = wait_for(vm, lambda d: psnr(d, console) >= 30, 10)
    record(ok, f"{label}: the console is back after the fbdev player (PSNR {psnr(after, console):.1f})")
    if status != 0 or not ok:
        print(output[-2000:])


def check_rgb565(vm, vitrine, label):
    """A 16-bit framebuffer, as small SPI screens are (the kernel's vfb at 640x480-16, whose layout is BGR565,
    with two screens of memory so frames pan): the photo with the clock and date on it as `render --overlay`
    draws them, and the minute's redraw on it too. The screen is read from the framebuffer's memory at its pan
    offset."""
    w, h = 640, 480
    rc, out = vm.run(f"modprobe vfb vfb_enable=1 videomemorysize={w * h * 2 * 2} mode_option={w}x{h}-16 && "
                     "for f in /sys/class/graphics/fb[0-9]*; do if grep -q 'Virtual FB' $f/name; then basename $f; "
                     "fi; done")
    fb = out.strip().splitlines()[-1] if rc == 0 and out.strip() else None
    if not record(fb is not None, f"{label}: the kernel's vfb gives a 16-bit framebuffer ({out.strip()[-200:]})"):
        return
    config = f"{vm.share}/rgb565.json"
    with open(config, "w") as f:
        f.write('{"library": "/share/lib", "deviceTable": "%s/Config/devices.json", "interval": 3600, '
                '"transition": "none", "fit": "contain", "locale": "en", "controlSocket": "/tmp/rgb565.sock", '
                '"overlay": {"clock": "HH:mm", "date": true}}\n' % REPO)
    photo = f"{vm.share}/lib/Test/{PHOTOS[0][0]}"
    references = {}

    def reference(minute):
        """What render draws, as a 16-bit screen holds it."""
        if minute not in references:
            out = f"{vm.share}/ref-565-{minute.replace(' ', '_')}.ppm"
            subprocess.run([vitrine, "render", photo, "--config", config, "--panel", f"{w}x{h}", "--overlay",
                            "--time", minute, "--output", out], check=True, capture_output=True)
            red, green, blue = Image.open(out).convert("RGB").split()
            references[minute] = Image.merge("RGB", (red.point(lambda v: v & 0xF8), green.point(lambda v: v & 0xFC),
                                                     blue.point(lambda v: v & 0xF8)))
        return references[minute]

    def screen():
        rc, _ = vm.run(f"y=$(cut -d, -f2 /sys/class/graphics/{fb}/pan); s=$(cat /sys/class/graphics/{fb}/stride); "
                       f"dd if=/dev/{fb} of=/share/rgb565.raw bs=$s skip=$y count={h} 2>/dev/null")
        if rc != 0:
            return Image.new("RGB", (w, h))
        with open(f"{vm.share}/rgb565.raw", "rb") as f:
            raw = f.read()
        stride = len(raw) // h
        if stride < w * 2:
            return Image.new("RGB", (w, h))
        pixels = bytearray()
        for row in range(h):
            line = raw[row * stride:row * stride + w * 2]
            for i in range(0, w * 2, 2):
                value = line[i] | line[i + 1] << 8
                pixels += bytes(((value & 31) << 3, (value >> 5 & 63) << 2, (value >> 11) << 3))
        return Image.frombytes("RGB", (w, h), bytes(pixels))

    def minute_now():
        return vm.run("date '+%Y-%m-%d %H:%M'")[1].strip()

    def next_minute(minute):
        stamp = time.mktime(time.strptime(minute, "%Y-%m-%d %H:%M")) + 60
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))

    def showing(minutes, timeout):
        return until(lambda: (lambda d: (any(psnr(d, reference(m)) >= 60 for m in minutes), d))(screen()), timeout,
                     step=0.5)

    vm.spawn("rgb565", f"exec {vitrine} play --config /share/rgb565.json --display fbdev:/dev/{fb}")
    minute = minute_now()
    ok, dump = showing([minute, next_minute(minute)], 60)
    shown = minute if psnr(dump, reference(minute)) >= 60 else next_minute(minute)
    record(ok, f"{label}: a BGR565 framebuffer shows the photo with the clock and date as `render --overlay` "
               f"draws them (PSNR {psnr(dump, reference(shown)):.1f} at {shown})")
    after = next_minute(shown)
    ok, dump = showing([after], 90)
    record(ok, f"{label}: on the BGR565 framebuffer the clock turns to {after} (PSNR {psnr(dump, reference(after)):.1f})")
    if not ok:
        dump.save(f"{vm.share}/rgb565-last.png")
    status, output = vm.stop("rgb565")
    if not ok or status != 0:
        print(output[-2000:])


def check_vt_switch(vm, vitrine, label, references):
    """Vitrine on VT 1 (as a boot service runs it): switching to VT 2 holds the show and hands the screen to that
    console; switching back brings the picture back within a second and the show goes on."""
    play_config(vm.share, 3)
    vm.spawn("vt", f"exec busybox openvt -c 1 -f -s -w -- sh -c "
                   f"'exec {vitrine} play --config /share/vitrine.json 2>/share/vt.log'")
    dump, ok = wait_for(vm, lambda d: max(psnr(d, r) for r in references) >= 40, 60)
    record(ok, f"{label}: vitrine on VT 1 shows a photo")
    status = f"{vitrine} ctl --control /tmp/vitrine.sock status"
    # In the guest: switch, then ask until the player reports the condition (the guest's own clock times it, so a
    # busy host's slow screendumps do not count); at most 20 s.
    def switch(vt, condition):
        rc, out = vm.run(f"start=$(date +%s%N); busybox chvt {vt}; while :; do answer=$({status}); "
                         f"case $answer in *{condition}*) break ;; esac; "
                         f"[ $(( $(date +%s%N) - start )) -gt 20000000000 ] && break; done; "
                         f"echo \"$answer\"; echo $(( ($(date +%s%N) - start) / 1000000 ))", timeout=40)
        lines = out.strip().splitlines()
        return (lines[-2] if len(lines) >= 2 else out), (int(lines[-1]) if lines and lines[-1].isdigit() else None)

    out, _ = switch(2, '\\"vtAway\\"')
    away = vm.screendump()
    record('"vtAway"' in out and max(psnr(away, r) for r in references) < 30,
           f"{label}: switching to VT 2 holds the show and shows that console ({out.strip()[:100]})")
    out, guest_ms = switch(1, '\\"paused\\":\\[\\]')
    dump, ok = wait_for(vm, lambda d: max(psnr(d, r) for r in references) >= 40, 10)
    record(ok and guest_ms is not None and guest_ms <= 1500 and '"paused":[]' in out,
           f"{label}: back on VT 1 the show goes on {guest_ms} ms after the switch (guest clock) and the picture "
           f"returns ({out.strip()[:80]})")
    vm.run(f"kill -TERM $(pidof vitrine)")
    vm.wait("vt", 30)
    with open(f"{vm.share}/vt.log") as f:
        log = f.read()
    record("VT switched away" in log and "VT back" in log and "stopping (signal 15)" in log,
           f"{label}: the player logged the switch and stopped on SIGTERM")
    check_vt_clip(vm, vitrine, label, switch)


def check_vt_clip(vm, vitrine, label, switch):
    """A clip playing on VT 1 when the VT is switched away and back: it holds while away and, back, goes on from
    its picture (the numbers on screen rise again), its frames intact."""
    sys.path.insert(0, os.path.join(REPO, "Tests", "Tools"))
    import make_clip
    folder = f"{vm.share}/vtclip/Clip"
    os.makedirs(folder, exist_ok=True)
    subprocess.run([sys.executable, f"{REPO}/Tests/Tools/make_clip.py", f"{folder}/loop.mp4", "--frames", "300",
                    "--size", "320x180", "--fps", "30"], check=True)
    scale = min(vm.width / 320, vm.height / 180)
    bw, bh = round(320 * scale), round(180 * scale)
    box = ((vm.width - bw) // 2, (vm.height - bh) // 2, bw, bh)
    with open(f"{vm.share}/vtclip.json", "w") as f:
        json.dump({"library": "/share/vtclip", "deviceTable": f"{REPO}/Config/devices.json", "interval": 2,
                   "transition": "none", "controlSocket": "/tmp/vitrine.sock", "display": {"backend": "drm"}}, f)
    vm.spawn("vtclip", f"exec busybox openvt -c 1 -f -s -w -- sh -c "
                       f"'exec {vitrine} play --config /share/vtclip.json 2>/share/vtclip.log'")

    def number(dump):
        return make_clip.read_counter(lambda x, y: dump.getpixel((x, y)), box)

    def red_bar(dump):
        r, g, b = dump.getpixel((box[0] + box[2] // 2, box[1] + box[3] * 7 // 8))
        return r > 150 and g < 90 and b < 90

    _, playing = wait_for(vm, lambda d: 3 <= number(d) < 250 and red_bar(d), 60)
    out, _ = switch(2, '\\"vtAway\\"')
    out, guest_ms = switch(1, '\\"playing\\":true')
    back, returned = wait_for(vm, lambda d: red_bar(d) and number(d) < 300, 10)
    first = number(back)
    later, rising = wait_for(vm, lambda d: red_bar(d) and number(d) > first, 10)
    record(playing and returned and rising and guest_ms is not None,
           f"{label}: a clip switched away from on VT 1 and back: its picture returns intact (picture {first}, the "
           f"bar under it) and it plays on (picture {number(later)}), {guest_ms} ms after the switch back")
    vm.run("kill -TERM $(pidof vitrine)")
    vm.wait("vtclip", 30)


def check_fades(vm, vitrine, label):
    """Crossfades between a red and a blue photo, three seconds each: every screendump must be one mix over the
    whole screen (a torn step would show the top half at one step and the bottom at another), and most of them
    must catch a fade between its ends."""
    os.makedirs(f"{vm.share}/fade/Fade", exist_ok=True)
    red, blue = (230, 20, 20), (20, 40, 220)
    for name, color in (("1-red.jpg", red), ("2-blue.jpg", blue)):
        Image.new("RGB", (1600, 900), color).save(f"{vm.share}/fade/Fade/{name}", quality=95)
    with open(f"{vm.share}/fade.json", "w") as f:
        f.write('{"library": "/share/fade", "deviceTable": "%s/Config/devices.json", "interval": 0.5, '
                '"transition": "fade", "transitionSeconds": 3, "controlSocket": "/tmp/fade.sock", '
                '"display": {"backend": "drm"}}\n' % REPO)
    vm.spawn("fades", f"exec {vitrine} play --config /share/fade.json")

    def near(color, target, tolerance=12):
        return all(abs(a - b) <= tolerance for a, b in zip(color, target))

    def mixed(dump):
        pixel = dump.convert("RGB").getpixel((10, 10))
        return not near(pixel, red, 20) and not near(pixel, blue, 20) and pixel[0] + pixel[2] > 150

    wait_for(vm, mixed, 60)
    clean, between, worst = 0, 0, 0
    for _ in range(8):
        dump = vm.screendump().convert("RGB")
        w, h = dump.size
        top = ImageStat.Stat(dump.crop((0, 0, w, h // 2)))
        bottom = ImageStat.Stat(dump.crop((0, h // 2, w, h)))
        # One blend step everywhere: both halves have the same mean and no pixel strays from it.
        spread = max(max(abs(hi - lo) for lo, hi in half.extrema) for half in (top, bottom))
        gap = max(abs(a - b) for a, b in zip(top.mean, bottom.mean))
        worst = max(worst, spread, gap)
        if spread <= 6 and gap <= 2:
            clean += 1
        mean = tuple(round(v) for v in top.mean)
        if not near(mean, red, 20) and not near(mean, blue, 20):
            between += 1
        time.sleep(0.37)
    record(clean == 8 and between >= 4,
           f"{label}: 8 screendumps during 3 s crossfades each show one clean blend ({clean} clean, worst spread "
           f"{worst:.0f} levels; {between} caught between red and blue)")
    status, output = vm.stop("fades")
    if clean != 8 or between < 4 or status != 0:
        print(output[-2000:])


def check_overlay(vm, vitrine, label):
    """The clock and date over the photo on a portrait panel: on screen as `vitrine render --overlay` draws them,
    large enough to read across a room, and the minute's redraw one flip, not a modeset."""
    w, h = vm.width, vm.height
    config = f"{vm.share}/overlay.json"
    with open(config, "w") as f:
        f.write('{"library": "/share/lib", "deviceTable": "%s/Config/devices.json", "interval": 3600, '
                '"transition": "none", "fit": "contain", "locale": "en", "controlSocket": "/tmp/overlay.sock", '
                '"display": {"backend": "drm"}, "overlay": {"clock": "HH:mm", "date": true}}\n' % REPO)
    photo = f"{vm.share}/lib/Test/{PHOTOS[0][0]}"
    references = {}

    def reference(minute):
        if minute not in references:
            out = f"{vm.share}/ref-overlay-{minute.replace(' ', '_')}.ppm"
            subprocess.run([vitrine, "render", photo, "--config", config, "--panel", f"{w}x{h}", "--overlay",
                            "--time", minute, "--output", out], check=True, capture_output=True)
            references[minute] = Image.open(out).convert("RGB")
        return references[minute]

    def guest_minute():
        return vm.run("date '+%Y-%m-%d %H:%M'")[1].strip()

    corner = (w // 2, 0, w, h // 6)

    def shows(dump, minute):
        # One digit of the corner differs by about 42 dB from the next minute's; the panel shows what render
        # draws to the pixel (99 dB).
        reference_corner = reference(minute).crop(corner)
        return psnr(dump.crop(corner), reference_corner) >= 60 and psnr(dump, reference(minute)) >= 40

    def next_minute(minute):
        stamp = time.mktime(time.strptime(minute, "%Y-%m-%d %H:%M")) + 60
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))

    def status():
        rc, out = vm.run(f"{vitrine} ctl --control /tmp/overlay.sock status")
        try:
            return json.loads(out)
        except ValueError:
            print(f"vitrine ctl status: exit {rc}: {out[-500:]}")
            return {}

    def status_inside_a_minute():
        """The status and the guest's minute, taken clear of a minute's turn (its redraw comes at the start):
        a count taken just after a turn would already hold that minute's flip. The guest first waits for
        seconds 3 to 50 of its minute."""
        for _ in range(3):
            rc, out = vm.run("for i in $(seq 400); do s=$(date +%S); [ ${s#0} -ge 3 ] && [ ${s#0} -le 50 ] && break; "
                             "sleep 0.2; done; date '+%S %Y-%m-%d %H:%M'; "
                             f"{vitrine} ctl --control /tmp/overlay.sock status; date '+%S'", timeout=120)
            lines = out.strip().splitlines()
            try:
                first, taken, last = int(lines[0].split()[0]), lines[0].split(" ", 1)[1], int(lines[-1])
                counts = json.loads(lines[1])
            except (ValueError, IndexError):
                print(f"vitrine ctl status: exit {rc}: {out[-500:]}")
                return {}, None
            if 3 <= first <= last <= 57:
                return counts, taken
        return {}, None

    vm.spawn("overlay", f"exec {vitrine} play --config /share/overlay.json")
    minute = guest_minute()
    dump, ok = wait_for(vm, lambda d: shows(d, minute) or shows(d, next_minute(minute)), 60)
    shown = minute if shows(dump, minute) else next_minute(minute)
    plain = render(vitrine, photo, w, h, vm.share)
    box = ImageChops.difference(reference(shown), plain).getbbox()
    tall = box[3] - box[1] if box else 0
    record(ok and tall >= h // 20,
           f"{label}: the clock and date are on screen as `render --overlay` draws them (corner PSNR "
           f"{psnr(dump.crop(corner), reference(shown).crop(corner)):.1f}), {tall} px tall in the corner {box}")
    before, taken = status_inside_a_minute()
    # The next minute: the clock changes on the glass.
    after_minute = next_minute(taken or shown)
    dump, ok = wait_for(vm, lambda d: shows(d, after_minute), 90)
    after = status()
    flips = after.get("flips", 0) - before.get("flips", 0)
    record(ok and flips == 1 and after.get("modesets") == before.get("modesets"),
           f"{label}: at {after_minute} the clock changed" + ("" if ok else " (not seen)") + f" with {flips} flip "
           f"and {after.get('modesets', 0) - before.get('modesets', 0)} modesets")
    if not ok:
        dump.save(f"{vm.share}/overlay-last.png")
        print(f"guest time {guest_minute()}, shown at first {shown}")
    status_code, output = vm.stop("overlay")
    if not ok or status_code != 0:
        print(output[-2000:])


def check_formats(vm, vitrine, label):
    """A library as phones fill it, on the real driver: the photos saved as PNG, WebP, HEIC and AVIF (and a PNG
    named .jpg), played in turn; each screendump matches `vitrine render` of the same file."""
    import pillow_heif
    pillow_heif.register_heif_opener()
    pillow_heif.register_avif_opener()
    sources = [Image.open(f"{vm.share}/lib/Test/{name}").convert("RGB") for name, _, _ in PHOTOS]
    folder = f"{vm.share}/formats/Mixed"
    os.makedirs(folder)
    files = [("1-landscape.png", sources[0], {}), ("2-portrait.webp", sources[1], {"quality": 92}),
             ("3-square.heic", sources[2], {"quality": 92}), ("4-landscape.avif", sources[0].rotate(180), {"quality": 92}),
             ("5-portrait-really-a-png.jpg", sources[1].transpose(Image.FLIP_LEFT_RIGHT), {"format": "PNG"})]
    for name, image, options in files:
        image.save(f"{folder}/{name}", **options)
    w, h = vm.width, vm.height
    references = [render(vitrine, f"{folder}/{name}", w, h, vm.share) for name, _, _ in files]
    with open(f"{vm.share}/formats.json", "w") as f:
        f.write('{"library": "/share/formats", "deviceTable": "%s/Config/devices.json", "interval": 2, '
                '"transition": "none", "order": "name", "display": {"backend": "drm"}}\n' % REPO)
    vm.spawn("formats", f"exec {vitrine} play --config /share/formats.json")
    shown = []
    for (name, _, _), reference in zip(files, references):
        dump, ok = wait_for(vm, lambda d, r=reference: psnr(d, r) >= 40, 45)
        shown.append(record(ok, f"{label}: {name} is shown as vitrine render shows it (PSNR {psnr(dump, reference):.1f})"))
        if not ok:
            dump.save(f"/tmp/vitrine-formats-{name}.png")
            print(f"      the last screendump is /tmp/vitrine-formats-{name}.png")
    status, output = vm.stop("formats")
    if status != 0 or not all(shown):
        print(output[-3000:])


def check_clip(vm, vitrine, label, name, size, codec, too_slow=None):
    """A 10 s 30 fps clip whose pictures carry their numbers (Tests/Tools/make_clip.py) alone in a category: QMP
    screendumps over 5 s read the number on the glass, which must only go up and at the clip's rate, whatever the
    guest's speed (a picture the guest cannot decode in time is passed over, not shown late).

    `too_slow` (name, size, codec) is a 120 fps clip this guest cannot decode at half its rate (a phone's 1080p
    slow-motion HEVC decodes at 13 to 30 pictures a second on one TCG CPU, against a line of 60: at 60 fps the line
    was 30, too near), first in the category: it is skipped with one line saying so before it is shown, and the
    other plays as before."""
    sys.path.insert(0, os.path.join(REPO, "Tests", "Tools"))
    import make_clip
    folder = f"{vm.share}/clips/Clip"
    os.makedirs(folder, exist_ok=True)
    subprocess.run([sys.executable, f"{REPO}/Tests/Tools/make_clip.py", f"{folder}/{name}", "--frames", "300",
                    "--size", size, "--fps", "30", "--codec", codec], check=True)
    if too_slow:
        subprocess.run([sys.executable, f"{REPO}/Tests/Tools/make_clip.py", f"{folder}/{too_slow[0]}", "--frames",
                        "60", "--size", too_slow[1], "--fps", "120", "--codec", too_slow[2]], check=True)
    cw, ch = (int(v) for v in size.split("x"))
    scale = min(vm.width / cw, vm.height / ch)
    bw, bh = round(cw * scale), round(ch * scale)
    box = ((vm.width - bw) // 2, (vm.height - bh) // 2, bw, bh)
    with open(f"{vm.share}/clips.json", "w") as f:
        json.dump({"library": "/share/clips", "deviceTable": f"{REPO}/Config/devices.json", "interval": 2,
                   "transition": "none", "controlSocket": "/tmp/clips.sock", "display": {"backend": "drm"}}, f)
    vm.spawn("clips", f"exec {vitrine} play --config /share/clips.json")

    def number(dump):
        return make_clip.read_counter(lambda x, y: dump.getpixel((x, y)), box)

    _, started = wait_for(vm, lambda d: 3 <= number(d) < 200, 60)
    seen = []
    begin = time.monotonic()
    end = begin + 5
    while time.monotonic() < end:
        dump = vm.screendump()
        seen.append((time.monotonic(), number(dump)))
        # One look per picture's time at most: a screendump holds QEMU's lock, and back to back they took a
        # one-CPU guest's time from the very decoder being measured.
        time.sleep(max(0.0, begin + len(seen) / 30 - time.monotonic()))
    rc, out = vm.run(f"{vitrine} ctl --control /tmp/clips.sock status")
    try:
        figures = json.loads(out).get("clip") or {} if rc == 0 else {}
    except ValueError:
        figures = {}
    status, output = vm.stop("clips")
    shutil.rmtree(folder)
    if too_slow:
        lines = [line for line in output.splitlines() if too_slow[0] in line]
        record(len(lines) == 1 and "too slow to play on this board" in lines[0]
               and "pictures a second in software" in lines[0] and "vitrine renditions" in lines[0],
               f"{label}: {too_slow[0]} ({too_slow[2]}, {too_slow[1]}), too slow for one CPU, is skipped with one line "
               f"before it is shown: {lines}")
    dropped, shown = figures.get("dropped", 0), figures.get("presented", 0)
    warned = "does not decode this" in output
    # Never silent: a board that passes over a fifth of the pictures says so, once.
    record(bool(figures) and not (dropped * 4 > dropped + shown and not warned) and not (warned and dropped == 0),
           f"{label}: {name}: {shown} pictures shown, {dropped} passed over; the log "
           f"{'says' if warned else 'does not say'} the board is too slow")
    rising = all(b[1] >= a[1] for a, b in zip(seen, seen[1:]))
    rate = (seen[-1][1] - seen[0][1]) / (seen[-1][0] - seen[0][0]) if len(seen) > 1 else 0
    decoder = re.search(r"decoded by ([^\n]+)", output)
    record(started and rising and 25 <= rate <= 35 and len(seen) >= 5,
           f"{label}: {name} ({codec}, {size}): {len(seen)} screendumps over 5 s read pictures "
           f"{[n for _, n in seen][:12]}, rising at {rate:.1f} a second (the clip's 30), decoded by "
           f"{decoder.group(1) if decoder else None}")
    if status != 0 or not started:
        print(output[-2000:])


def run_panel(vitrine, device, w, h, tearing, hotplug=False, fbdev=False):
    label = f"{device} {w}x{h}"
    with vmlib.VM(device=device, width=w, height=h) as vm:
        share = vm.share
        make_library(share)
        references = [render(vitrine, f"{share}/lib/Test/{name}", w, h, share) for name, _, _ in PHOTOS]

        rc, out = vm.run(f"{vitrine} probe --devices {REPO}/Config/devices.json")
        connector = next((line.split(":")[0].strip() for line in out.splitlines()
                          if line.startswith("  ") and ": connected" in line), None)
        if not record(rc == 0 and connector is not None and f"{w}x{h}@" in out and "profile:" in out,
                      f"{label}: vitrine probe names connector {connector}, mode {w}x{h} and a profile"):
            print(out)

        console = vm.screendump()
        play_config(share, 3)
        vm.spawn("player", f"exec {vitrine} play --config /share/vitrine.json")
        first, ok = wait_for(vm, lambda d: psnr(d, references[0]) >= 40, 60)
        record(ok, f"{label}: the first photo on screen matches vitrine render (PSNR {psnr(first, references[0]):.1f})")
        second, ok = wait_for(vm, lambda d: psnr(d, references[1]) >= 40, 30)
        record(ok, f"{label}: the show advances on its timer to the second photo (PSNR {psnr(second, references[1]):.1f})")
        status, output = vm.stop("player")
        record(status == 0, f"{label}: SIGTERM ends vitrine with status 0 (got {status})")
        after, ok = wait_for(vm, lambda d: psnr(d, console) >= 45, 10)
        record(ok, f"{label}: the console is back after exit (PSNR {psnr(after, console):.1f} against before)")
        if status != 0 or not ok:
            print(output[-2000:])

        if hotplug:
            check_hotplug(vm, vitrine, label, references)

        if (device, w, h) == ("virtio", 800, 480):
            check_service(vm, vitrine, label, references)

        if fbdev:
            check_fbdev(vm, vitrine, label, references, console)
            check_rgb565(vm, vitrine, label)

        if (device, w, h) == ("bochs", 800, 480):
            check_vt_switch(vm, vitrine, label, references)

        if (w, h) == (1920, 1080):
            check_fades(vm, vitrine, label)

        if (device, w, h) == ("virtio", 1920, 1080):
            check_formats(vm, vitrine, label)

        if (device, w, h) == ("virtio", 1080, 1920):
            check_overlay(vm, vitrine, label)
            check_clip(vm, vitrine, label, "portrait-panel.mov", "640x360", "libx265")

        if (device, w, h) == ("virtio", 1024, 600):
            check_clip(vm, vitrine, label, "counter.mp4", "1280x720", "libx264",
                       too_slow=("a-phone.mov", "1920x1080", "libx265"))

        if tearing:
            play_config(share, 0.2)
            vm.spawn("fast", f"exec {vitrine} play --config /share/vitrine.json")
            wait_for(vm, lambda d: psnr(d, references[0]) >= 40, 60)
            seen = set()
            worst = 99.0
            for _ in range(8):
                dump = vm.screendump()
                scores = [halves_match(dump, reference) for reference in references]
                best = max(range(len(references)), key=lambda i: scores[i])
                seen.add(best)
                worst = min(worst, scores[best])
                time.sleep(0.13)
            record(worst >= 35, f"{label}: 8 screendumps while slides change every 0.2 s each show one whole photo "
                                f"(worst half PSNR {worst:.1f}; photos seen {sorted(seen)})")
            vm.stop("fast")


def main():
    def options(p):
        p.add_argument("--only", nargs="*", default=None, help="panels as DEVICE:WxH")
    args = vmlib.arguments(__doc__, options)
    ok, reason = vmlib.check()
    if not ok:
        return vmlib.skipped("VM tests", reason)
    if not os.access(args.vitrine, os.X_OK):
        print(f"FAIL  {args.vitrine} is not built (make release)")
        return 1
    panels = PANELS
    if args.only:
        panels = [p for p in PANELS if f"{p[0]}:{p[1]}x{p[2]}" in args.only]
    for device, w, h in panels:
        try:
            run_panel(args.vitrine, device, w, h, tearing=(w, h) == (800, 480),
                      hotplug=(device, w, h) == ("virtio", 1024, 600), fbdev=(device, w, h) == ("bochs", 1024, 600))
        except Exception as error:  # a hung or crashed guest fails this panel, not the whole run
            record(False, f"{device} {w}x{h}: {type(error).__name__}: {error}")
    return summary()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Makes a test clip whose pictures carry their own number: the picture is cut into `BITS` columns, each white
where that bit of the picture's number is set and black where not, with a red bar under them (so a turned clip
shows which way up it is). Any scaling keeps the columns readable (`read_counter`), which is how the tests tell
which picture is on the screen without asking the player. Pictures come from Pillow and are encoded by ffmpeg.

    make_clip.py OUT --frames 300 --size 1280x720 --fps 30 --codec libx264 [--rotate 90] [--tone 440 [--beep 1000]]

With `--tone` the clip has a sound track (AAC, or Opus in WebM): a sine of that frequency, and with `--beep` the
first tenth of every whole second is a sine of the beep's frequency instead, so a recording of the sound shows
where each second of the clip was heard.
"""
import argparse
import os
import subprocess
import sys

BITS = 10


def picture(number, width, height):
    bar = height * 3 // 4
    row = bytearray(width * 3)
    for x in range(width):
        value = 255 if (number >> (BITS - 1 - x * BITS // width)) & 1 else 0
        row[x * 3:x * 3 + 3] = bytes((value, value, value))
    return bytes(row) * bar + b"\xd0\x20\x20" * width * (height - bar)


def read_counter(pixel, box):
    """The number shown in `box` (x, y, width, height) of a picture, `pixel(x, y)` giving (r, g, b)."""
    x0, y0, width, height = box
    number = 0
    for bit in range(BITS):
        x = x0 + int((bit + 0.5) * width / BITS)
        y = y0 + height * 3 // 8
        r, g, b = pixel(x, y)
        number = number * 2 + (1 if (r + g + b) > 3 * 128 else 0)
    return number


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--size", default="320x180")
    parser.add_argument("--fps", type=float, default=30)
    parser.add_argument("--codec", default="libx264")
    parser.add_argument("--rotate", type=int, default=0, help="display matrix rotation (degrees, as phones write)")
    parser.add_argument("--tone", type=float, default=0, help="a sine tone of this frequency as the sound track")
    parser.add_argument("--beep", type=float, default=0, help="with --tone: 0.1 s of this frequency each second")
    parser.add_argument("--extra", default="", help="more ffmpeg output options")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    command = ["ffmpeg", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{width}x{height}",
               "-r", str(args.fps), "-i", "-"]
    if args.tone:
        frequency = f"if(lt(mod(t\\,1)\\,0.1)\\,{args.beep}\\,{args.tone})" if args.beep else str(args.tone)
        command += ["-f", "lavfi", "-i", f"aevalsrc=exprs=0.4*sin(2*PI*t*{frequency}):s=48000",
                    "-shortest", "-c:a", "aac" if not args.out.endswith(".webm") else "libopus"]
    command += ["-c:v", args.codec, "-pix_fmt", "yuv420p"]
    if args.codec == "libx264":
        command += ["-preset", "veryfast", "-crf", "18", "-g", "30"]
    elif args.codec == "libx265":
        command += ["-preset", "veryfast", "-crf", "20", "-tag:v", "hvc1", "-x265-params", "log-level=error"]
    elif args.codec == "libvpx-vp9":
        command += ["-b:v", "0", "-crf", "30", "-deadline", "realtime"]
    command += args.extra.split() if args.extra else []
    target = args.out + ".unturned" + os.path.splitext(args.out)[1] if args.rotate else args.out
    command.append(target)
    encoder = subprocess.Popen(command, stdin=subprocess.PIPE)
    cache = {}
    for number in range(args.frames):
        if number not in cache:
            cache = {number: picture(number, width, height)}
        encoder.stdin.write(cache[number])
    encoder.stdin.close()
    if encoder.wait() != 0:
        sys.exit(1)
    if args.rotate:
        # FFmpeg 5.1 writes a display matrix from the `rotate` tag only when copying the stream.
        status = subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", target, "-c", "copy", "-metadata:s:v:0",
                                 f"rotate={args.rotate}", args.out]).returncode
        os.remove(target)
        sys.exit(status)


if __name__ == "__main__":
    main()

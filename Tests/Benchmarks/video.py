#!/usr/bin/python3
"""What playing a clip costs in software here, against a reference measured in the same run: `vitrine bench --clip`
decodes every picture of a 10 s clip and scales it onto the panel as the player does (libavcodec on two threads,
libswscale bicubic into the frame's box); the reference is ffmpeg's own command line doing the same work on the
same file (`-threads 2`, the same scaling to BGRX, output discarded). For 720p30 and 1080p30 H.264 with film-like
detail (ffmpeg's testsrc2 under temporal noise) at 8 and 16 Mbit/s, as phones record, onto a 1920x1080 and a 1024x600 panel;
three runs each, medians. Also CPU seconds per second of clip, the peak resident memory, and the scaling alone into
the BGRX frame against into NV12 for a plane that converts colours itself (the same pictures, the same run): what
is left on the CPU of a board whose hardware decodes.

Usage: video.py [--vitrine PATH] [--runs N]
"""
import argparse
import os
import re
import statistics
import subprocess

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# Size and bit rate as phones record (an iPhone's 1080p30 H.264 is about 16 Mbit/s).
CLIPS = {"720p30": ((1280, 720), "8M"), "1080p30": ((1920, 1080), "16M")}
PANELS = [(1920, 1080), (1024, 600)]


def make(folder, name, size, rate):
    path = f"{folder}/{name}.mp4"
    if not os.path.exists(path):
        w, h = size
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc2=size={w}x{h}:rate=30:d=10",
                        "-vf", "noise=alls=6:allf=t", "-c:v", "libx264", "-preset", "medium", "-b:v", rate,
                        "-maxrate", rate, "-bufsize", rate, "-pix_fmt", "yuv420p", "-g", "60", path], check=True)
    return path


def box(clip, panel):
    scale = min(panel[0] / clip[0], panel[1] / clip[1])
    return round(clip[0] * scale), round(clip[1] * scale)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vitrine", default=f"{REPO}/.build/release/vitrine")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    folder = f"{REPO}/.build/bench-clips"
    os.makedirs(folder, exist_ok=True)
    print(f"{'clip':<9}{'Mbit/s':>7}{'panel':>11}{'vitrine ms':>12}{'ffmpeg ms':>11}{'ratio':>7}{'x real time':>13}"
          f"{'CPU s/s':>9}{'peak MiB':>10}{'scale ms':>10}{'NV12 ms':>9}{'ratio':>7}")
    for name, (size, rate) in CLIPS.items():
        path = make(folder, name, size, rate)
        mbits = os.path.getsize(path) * 8 / 10 / 1e6
        for panel in PANELS:
            ours, theirs, cpu, peak, scale, planar = [], [], [], [], [], []
            for _ in range(args.runs):
                out = subprocess.run([args.vitrine, "bench", "--clip", path, "--panel", f"{panel[0]}x{panel[1]}",
                                      "--decoder", "software", "--tsv"], check=True, capture_output=True,
                                     text=True).stdout.splitlines()
                row = dict(zip(out[0].split("\t"), out[1].split("\t")))
                ours.append(float(row["per_picture_ms"]))
                cpu.append(float(row["cpu_per_clip_second"]))
                peak.append(float(row["peak_rss_mib"]))
                # Scaling alone, into the BGRX frame and into NV12 for a plane that converts colours (a Pi's vc4):
                # what is left on the CPU where a hardware decoder decodes.
                scale.append(float(row["scale_median_ms"]))
                planar.append(float(row["scale_nv12_median_ms"]) if row["scale_nv12_median_ms"] != "-" else float("nan"))
                w, h = box(size, panel)
                done = subprocess.run(["ffmpeg", "-nostats", "-benchmark", "-threads", "2", "-i", path, "-vf",
                                       f"scale={w}:{h}:flags=bicubic,format=bgr0", "-f", "null", "-"],
                                      capture_output=True, text=True)
                real = re.search(r"rtime=([0-9.]+)s", done.stdout + done.stderr)
                theirs.append(float(real.group(1)) * 1000 / 300 if real else float("nan"))
            mine, reference = statistics.median(ours), statistics.median(theirs)
            print(f"{name:<9}{mbits:>7.1f}{panel[0]:>6}x{panel[1]:<4}{mine:>12.2f}{reference:>11.2f}"
                  f"{mine / reference:>7.2f}{33.33 / mine:>13.1f}{statistics.median(cpu):>9.2f}"
                  f"{statistics.median(peak):>10.1f}{statistics.median(scale):>10.2f}{statistics.median(planar):>9.2f}"
                  f"{statistics.median(planar) / statistics.median(scale):>7.2f}")


if __name__ == "__main__":
    main()

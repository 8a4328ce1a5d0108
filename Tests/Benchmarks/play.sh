#!/usr/bin/env bash
# Whole-process figures for `vitrine play`, headless: peak RSS over 100 slides at 3840x2160, 1920x1080 and 800x480 with an
# interval of 0.1 s, the median time from a slide's deadline to its frame on screen (the next slide prefetched),
# and the CPU used while one slide stays on screen for 10 s.
# Usage: play.sh [--vitrine PATH] PHOTO...   (the photos are shown in turn; use baseline JPEGs for the RSS figure)
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
vitrine="$script_dir/../../.build/release/vitrine"
photos=()
while (($#)); do
    case $1 in
    --vitrine) vitrine=$2; shift 2 ;;
    -h | --help) sed -n '2,5p' "$0"; exit 0 ;;
    *) photos+=("$(realpath "$1")"); shift ;;
    esac
done
((${#photos[@]})) || { echo "usage: play.sh [--vitrine PATH] PHOTO..." >&2; exit 2; }
[[ -x $vitrine ]] || { echo "play.sh: $vitrine is not built (make release)" >&2; exit 1; }
if [[ ! -x /usr/bin/time ]]; then
    sudo=""; [[ $(id -u) -eq 0 ]] || sudo=sudo
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq time >/dev/null
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/library/Bench"
for photo in "${photos[@]}"; do ln -s "$photo" "$work/library/Bench/$(basename "$photo")"; done
config="$work/vitrine.json"
printf '{"library": "%s", "deviceTable": "%s", "controlSocket": "%s"}\n' \
    "$work/library" "$(realpath "$script_dir/../../Config/devices.json")" "$work/control.sock" >"$config"

echo "# $(uname -m), $(nproc) cores; $vitrine"
echo "# photos: ${photos[*]##*/}"
printf '%-10s %14s %22s %16s\n' panel "peak RSS MiB" "deadline-to-present ms" "median decode ms"
for panel in 3840x2160 1920x1080 800x480; do
    log="$work/play-$panel.log"
    /usr/bin/time -o "$work/time-$panel" -f %M "$vitrine" play --config "$config" --display "headless:$panel" \
        --interval 0.1 --exit-after 100 --stats 2>"$log"
    rss=$(cat "$work/time-$panel")
    /usr/bin/python3 - "$log" "$rss" "$panel" <<'PY'
import re, statistics, sys
log, rss, panel = sys.argv[1], int(sys.argv[2]), sys.argv[3]
latency, decode = [], []
for line in open(log, encoding="utf-8"):
    m = re.search(r"decode ([0-9.]+) ms deadline-to-present ([0-9.]+) ms", line)
    if m:
        decode.append(float(m.group(1)))
        latency.append(float(m.group(2)))
print(f"{panel:<10} {rss / 1024:14.1f} {statistics.median(latency):22.1f} {statistics.median(decode):16.1f}"
      f"   ({len(latency)} slides)")
PY
done

# Idle: one slide on screen for 10 s, measured after start-up (the first decode and the prefetch) is over.
"$vitrine" play --config "$config" --display headless:1920x1080 --interval 600 2>/dev/null &
player=$!
sleep 2
ticks() { awk '{print $14 + $15}' "/proc/$player/stat"; }
before=$(ticks)
sleep 10
after=$(ticks)
kill -TERM "$player"
wait "$player" || true
/usr/bin/python3 -c "import os, sys; t = (int(sys.argv[2]) - int(sys.argv[1])) / os.sysconf('SC_CLK_TCK'); print(f'idle: {t:.2f} s of CPU in 10 s showing one slide = {t * 10:.2f} % of a core')" "$before" "$after"

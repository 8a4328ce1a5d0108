#!/usr/bin/env bash
# The cost of the looks, each against a reference measured in the same run:
#  - a crossfade step (two frames mixed into a third) against copying one frame (what a cut costs), at 800x480
#    and 1920x1080: `vitrine bench --blend`;
#  - `contain-blur` against plain `contain`, per photo and in sum, at 1920x1080: `vitrine bench --fit ...`,
#    the two fits alternated twice and the smaller median of each kept;
#  - the player's peak RSS with crossfades on against off: headless, 40 slides, interval 0.1 s, fade 0.3 s, on
#    the --play photos (baseline JPEGs, so a progressive decode's coefficient buffer does not hide the frames).
# Usage: look.sh [--vitrine PATH] [--play PHOTO]... PHOTO...
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
vitrine="$script_dir/../../.build/release/vitrine"
photos=()
play=()
while (($#)); do
    case $1 in
    --vitrine) vitrine=$2; shift 2 ;;
    --play) play+=("$(realpath "$2")"); shift 2 ;;
    -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
    *) photos+=("$(realpath "$1")"); shift ;;
    esac
done
((${#photos[@]})) || { echo "usage: look.sh [--vitrine PATH] [--play PHOTO]... PHOTO..." >&2; exit 2; }
((${#play[@]})) || play=("${photos[@]}")
[[ -x $vitrine ]] || { echo "look.sh: $vitrine is not built (make release)" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "look.sh: /usr/bin/time is missing (make bench-deps)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "# $(uname -m), $(nproc) cores; $vitrine"

echo "## crossfade step vs frame copy"
for panel in 800x480 1920x1080; do "$vitrine" bench --blend --panel "$panel" --runs 300; done

echo "## contain-blur vs contain at 1920x1080 (median ms of 5 renders, best of 2 rounds)"
for round in 1 2; do
    for fit in contain contain-blur; do
        "$vitrine" bench "${photos[@]}" --panel 1920x1080 --fit "$fit" --runs 5 --tsv >"$work/$fit-$round.tsv"
    done
done
/usr/bin/python3 - "$work" <<'PY'
import sys
work = sys.argv[1]
def medians(fit):
    best = {}
    for round in (1, 2):
        for line in open(f"{work}/{fit}-{round}.tsv"):
            cells = line.rstrip("\n").split("\t")
            if len(cells) == 8 and cells[0] != "file":
                best[cells[0]] = min(best.get(cells[0], float("inf")), float(cells[6]))
    return best
plain, blur = medians("contain"), medians("contain-blur")
print(f"{'photo':44} {'contain':>8} {'blur':>8} {'ratio':>6}")
for name in plain:
    print(f"{name:44} {plain[name]:8.1f} {blur[name]:8.1f} {blur[name] / plain[name]:6.2f}")
total_plain, total_blur = sum(plain.values()), sum(blur.values())
print(f"{'sum':44} {total_plain:8.1f} {total_blur:8.1f} {total_blur / total_plain:6.2f}")
PY

echo "## player peak RSS, crossfades off vs on (40 slides, 0.1 s interval, 0.3 s fades)"
mkdir -p "$work/library/Bench"
for photo in "${play[@]}"; do ln -s "$photo" "$work/library/Bench/$(basename "$photo")"; done
printf '%-10s %10s %10s %8s %12s\n' panel "off MiB" "on MiB" "on-off" "frame MiB"
for panel in 800x480 1920x1080; do
    rss=()
    for transition in none fade; do
        config="$work/vitrine-$transition.json"
        printf '{"library": "%s", "deviceTable": "%s", "controlSocket": "%s", "transition": "%s", "transitionSeconds": 0.3}\n' \
            "$work/library" "$(realpath "$script_dir/../../Config/devices.json")" "$work/control.sock" "$transition" \
            >"$config"
        /usr/bin/time -o "$work/time" -f %M "$vitrine" play --config "$config" --display "headless:$panel" \
            --interval 0.1 --exit-after 40 2>"$work/play-$transition.log"
        rss+=("$(cat "$work/time")")
    done
    /usr/bin/python3 -c "
import sys
panel, off, on = sys.argv[1], int(sys.argv[2]) / 1024, int(sys.argv[3]) / 1024
w, h = map(int, panel.split('x'))
print(f'{panel:<10} {off:10.1f} {on:10.1f} {on - off:8.1f} {w * h * 4 / 1048576:12.1f}')" "$panel" "${rss[@]}"
done

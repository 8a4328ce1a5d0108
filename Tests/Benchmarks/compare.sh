#!/usr/bin/env bash
# Compare vitrine's photo-to-panel path with tjbench (the libjpeg-turbo
# decode floor at the same DCT scale), vipsthumbnail and Pillow.
#
# usage: compare.sh [--vitrine PATH] [--panel 1920x1080] [--runs 5] PHOTO...
#
#   --vitrine PATH  vitrine binary (default: ../../.build/release/vitrine
#                   relative to this script)
#   --panel WxH     panel size (default 1920x1080)
#   --runs N        runs per photo and tool (default 5)
#   PHOTO...        JPEG files; a folder stands for its *.jpg/*.jpeg files
#
# Per photo (all in this one run):
#   vitrine     `vitrine bench --tsv`: median_ms of the whole path, and the
#               DCT scale it chose
#   tjbench     `tjbench PHOTO -scale S -bgrx -nowrite -benchtime 1 -warmup 0.3`
#               at vitrine's scale S: ms = 1000 / Decompress "Frame rate"
#   vips        `vipsthumbnail PHOTO --size WxH -o OUT.jpg`: median wall time
#               of --runs process runs (includes process start and JPEG save)
#   pillow      one /usr/bin/python3 process: open, draft('RGB', (W, H)),
#               ImageOps.exif_transpose, LANCZOS resize to the contain size;
#               median of --runs
# Ratios are to tjbench's floor; the sum row (sum of medians / sum of
# tjbench floors) is the headline: vitrine must be <= 1.15.
# Then peak RSS per photo: vitrine bench --runs 1 (its peak_rss_kib), and
# /usr/bin/time -f %M for vitrine render, vipsthumbnail and a Pillow one-shot.
#
# Missing tools are installed with apt-get (time, libjpeg-turbo-progs,
# libvips-tools, python3-pil).
set -euo pipefail

PY=/usr/bin/python3
TARGET=1.15
US=$'\x1f' # field separator of the Python helpers' output (tabs would collapse in `read`)
prog=$(basename "$0")
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
vitrine="$script_dir/../../.build/release/vitrine"
panel=1920x1080
runs=5
photo_args=()

usage() {
    sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p;}' "$0"
}
die() {
    echo "$prog: $*" >&2
    exit 2
}

cmdline=$(printf '%q ' "$0" "$@")

while (($#)); do
    case $1 in
        --vitrine) (($# >= 2)) || die "--vitrine needs a value"; vitrine=$2; shift 2 ;;
        --vitrine=*) vitrine=${1#*=}; shift ;;
        --panel) (($# >= 2)) || die "--panel needs a value"; panel=$2; shift 2 ;;
        --panel=*) panel=${1#*=}; shift ;;
        --runs) (($# >= 2)) || die "--runs needs a value"; runs=$2; shift 2 ;;
        --runs=*) runs=${1#*=}; shift ;;
        -h | --help) usage; exit 0 ;;
        --) shift; photo_args+=("$@"); break ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) photo_args+=("$1"); shift ;;
    esac
done

[[ $panel =~ ^([1-9][0-9]*)x([1-9][0-9]*)$ ]] || die "--panel must be WxH, got '$panel'"
panel_w=${BASH_REMATCH[1]}
panel_h=${BASH_REMATCH[2]}
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive integer, got '$runs'"
((${#photo_args[@]})) || { usage >&2; exit 2; }
[[ -x $vitrine && -f $vitrine ]] || die "vitrine binary not found or not executable: $vitrine (build it, or pass --vitrine)"

# Photos: files as given, folders expanded to their *.jpg / *.jpeg files.
photos=()
# Absolute paths: tjbench runs in a scratch folder.
for arg in "${photo_args[@]}"; do
    [[ -e $arg ]] && arg=$(realpath "$arg")
    if [[ -d $arg ]]; then
        while IFS= read -r -d '' f; do
            photos+=("$f")
        done < <(find "$arg" -maxdepth 1 -type f \( -iname '*.jpg' -o -iname '*.jpeg' \) -print0 | sort -z)
    elif [[ -f $arg ]]; then
        photos+=("$arg")
    else
        die "$arg: no such file or directory"
    fi
done
((${#photos[@]})) || die "no photos found"

# Tools: install whatever is missing (apt-get update only when needed).
missing=()
command -v /usr/bin/time >/dev/null 2>&1 || missing+=(time)
command -v tjbench >/dev/null 2>&1 || missing+=(libjpeg-turbo-progs)
command -v vipsthumbnail >/dev/null 2>&1 || missing+=(libvips-tools)
if [[ ! -x $PY ]] || ! "$PY" -c 'import PIL' >/dev/null 2>&1; then
    missing+=(python3-pil)
fi
if ((${#missing[@]})); then
    echo "installing: ${missing[*]}" >&2
    sudo_cmd=()
    if (($(id -u) != 0)) && command -v sudo >/dev/null 2>&1; then sudo_cmd=(sudo); fi
    "${sudo_cmd[@]}" apt-get update >&2
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y "${missing[@]}" >&2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vitrine-compare.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# ---------------------------------------------------------------- helpers
cat >"$tmp/helper.py" <<'PYEOF'
"""Small helpers for compare.sh: timing, Pillow runs, parsing, tables."""
import csv
import math
import re
import statistics
import subprocess
import sys
import time

SEP = "\x1f"  # compare.sh reads these lines with IFS=$US (tabs would collapse)


def contain_size(cw, ch, pw, ph):
    if pw * ch >= ph * cw:
        return cw, min(ch, max(1, (2 * ph * cw + pw) // (2 * pw)))
    return min(cw, max(1, (2 * pw * ch + ph) // (2 * ph))), ch


def pillow_render(path, cw, ch):
    from PIL import Image, ImageOps
    with Image.open(path) as im:
        pw, ph = im.size
        orientation = im.getexif().get(0x0112, 1)
        if orientation in (5, 6, 7, 8):
            pw, ph = ph, pw
        im.draft("RGB", (cw, ch))
        img = ImageOps.exif_transpose(im)
        if img.mode != "RGB":
            img = img.convert("RGB")
        return img.resize(contain_size(cw, ch, pw, ph), Image.LANCZOS)


def cmd_pillow_bench(out_tsv, cw, ch, runs, *paths):
    """name<TAB>median_ms (or n/a<TAB>reason) for every photo."""
    cw, ch, runs = int(cw), int(ch), int(runs)
    with open(out_tsv, "w", encoding="utf-8") as out:
        for path in paths:
            times = []
            try:
                for _ in range(runs):
                    t0 = time.perf_counter()
                    pillow_render(path, cw, ch)
                    times.append((time.perf_counter() - t0) * 1000.0)
                out.write(f"{path}{SEP}{statistics.median(times):.3f}{SEP}\n")
            except Exception as exc:  # noqa: BLE001 - reported in the table
                out.write(f"{path}{SEP}n/a{SEP}{type(exc).__name__}: {exc}\n")


def cmd_pillow_oneshot(path, cw, ch):
    pillow_render(path, int(cw), int(ch))


def cmd_time_runs(runs, *cmd):
    """Median wall ms of `runs` runs of cmd; n/a if any run fails."""
    times = []
    for _ in range(int(runs)):
        t0 = time.perf_counter()
        rc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, check=False).returncode
        times.append((time.perf_counter() - t0) * 1000.0)
        if rc != 0:
            print(f"n/a{SEP}exit {rc}")
            return
    print(f"{statistics.median(times):.3f}{SEP}")


def cmd_tjbench_ms(log):
    """ms per decode from tjbench's Decompress "Frame rate" line."""
    with open(log, encoding="utf-8", errors="replace") as f:
        text = f.read()
    m = re.search(r"^Decompress\s*-->\s*Frame rate:\s*([0-9.]+)\s*fps", text, re.M)
    size = re.search(r"^Image size:\s*(\d+) x (\d+) --> (\d+) x (\d+)", text, re.M)
    fmt = re.search(r"^>>>>>\s*(.*?)\s*<<<<<", text, re.M)
    decoded = f"{size.group(3)}x{size.group(4)}" if size else ""
    if m and float(m.group(1)) > 0:
        info = fmt.group(1) if fmt else ""
        print(f"{1000.0 / float(m.group(1)):.3f}{SEP}{decoded}{SEP}{info}")
        return
    err = [ln.strip() for ln in text.splitlines()
           if ln.strip() and not ln.startswith("Warmup")]
    print(f"n/a{SEP}{decoded}{SEP}{' / '.join(err[-2:]) or 'no Frame rate line'}")


def fnum(x):
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def ratio(a, b):
    return f"{a / b:.2f}" if a is not None and b else "-"


def ms(v):
    return f"{v:.1f}" if v is not None else "n/a"


def cmd_table(data_tsv, target):
    """Per-photo table, sum row and headline from the collected TSV."""
    target = float(target)
    with open(data_tsv, encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    cols = [("photo", 40, "<"), ("scale", 5, "<"), ("decoded", 10, "<"),
            ("tjbench", 8, ">"), ("vitrine", 8, ">"), ("x", 5, ">"),
            ("vips", 8, ">"), ("x", 5, ">"), ("pillow", 8, ">"), ("x", 5, ">")]

    def line(vals):
        return "  ".join(f"{v:{a}{w}}" for v, (_, w, a) in zip(vals, cols)).rstrip()

    print("times in ms (median); x = ratio to the tjbench floor at the same scale")
    print(line([c[0] for c in cols]))
    sums = {"tj": 0.0, "vit": 0.0, "vips": 0.0, "pil": 0.0}
    counted, notes = 0, []
    for r in rows:
        tj, vit = fnum(r["tj_ms"]), fnum(r["vit_ms"])
        vips, pil = fnum(r["vips_ms"]), fnum(r["pillow_ms"])
        name = r["file"] if len(r["file"]) <= 40 else r["file"][:37] + "..."
        print(line([name, r["scale"], r["decoded"], ms(tj), ms(vit), ratio(vit, tj),
                    ms(vips), ratio(vips, tj), ms(pil), ratio(pil, tj)]))
        for key, label in (("tj_note", "tjbench"), ("vips_note", "vips"),
                           ("pillow_note", "pillow")):
            if r[key]:
                notes.append(f"{r['file']}: {label}: {r[key]}")
        if None in (tj, vit, vips, pil):
            notes.append(f"{r['file']}: left out of the sums (a tool has no time)")
            continue
        counted += 1
        for key, v in (("tj", tj), ("vit", vit), ("vips", vips), ("pil", pil)):
            sums[key] += v
    print(line([f"sum of medians ({counted} photos)", "", "", ms(sums["tj"]), ms(sums["vit"]),
                ratio(sums["vit"], sums["tj"]), ms(sums["vips"]),
                ratio(sums["vips"], sums["tj"]), ms(sums["pil"]), ratio(sums["pil"], sums["tj"])]))
    for n in notes:
        print(f"  note: {n}")
    print()
    if counted and sums["tj"] > 0:
        head = sums["vit"] / sums["tj"]
        verdict = "OK" if head <= target else "ABOVE TARGET"
        print(f"headline: vitrine / tjbench floor = {sums['vit']:.1f} / {sums['tj']:.1f} ms"
              f" = {head:.3f} (target <= {target:.2f}): {verdict}")
    else:
        print("headline: n/a (no photo has both a vitrine and a tjbench time)")


def cmd_rss_table(rss_tsv):
    def mib(v):
        return f"{int(v) / 1024:.1f}" if v.isdigit() else "n/a"
    with open(rss_tsv, encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    fmt = "{:<40}  {:>14}  {:>14}  {:>8}  {:>8}"
    print("peak RSS in MiB, one photo per process")
    print(fmt.format("photo", "vitrine(bench)", "vitrine(time)", "vips", "pillow"))
    for r in rows:
        name = r["file"] if len(r["file"]) <= 40 else r["file"][:37] + "..."
        print(fmt.format(name, mib(r["vit_bench"]), mib(r["vit_time"]),
                         mib(r["vips"]), mib(r["pillow"])))


if __name__ == "__main__":
    globals()["cmd_" + sys.argv[1].replace("-", "_")](*sys.argv[2:])
PYEOF
helper() { "$PY" "$tmp/helper.py" "$@"; }

# ---------------------------------------------------------------- header
echo "# command: ${cmdline% }"
echo "# uname -m: $(uname -m)"
echo "# nproc: $(nproc)"
echo "# vitrine: $vitrine"
echo "# vips: $(vipsthumbnail --version 2>/dev/null || echo '?'); Pillow: $("$PY" -c 'import PIL; print(PIL.__version__)'); tjbench: $(command -v tjbench)"
echo "# panel ${panel}, contain, ${runs} run(s) per photo and tool, ${#photos[@]} photo(s)"
echo

# ---------------------------------------------------------------- vitrine bench
bench_rc=0
"$vitrine" bench "${photos[@]}" --panel "$panel" --runs "$runs" --tsv \
    >"$tmp/vitrine.tsv" 2>"$tmp/vitrine.err" || bench_rc=$?
if [[ -s $tmp/vitrine.err ]]; then
    sed 's/^/# /' "$tmp/vitrine.err"
fi
if ! head -n 1 "$tmp/vitrine.tsv" | grep -q $'^file\twidth\theight\tscale\tdecoded'; then
    die "vitrine bench exited $bench_rc without a TSV table"
fi
if ((bench_rc != 0)); then
    echo "# vitrine bench exited $bench_rc (photos it skipped are left out below)"
fi

# Pillow: one process for all photos.
helper pillow-bench "$tmp/pillow.tsv" "$panel_w" "$panel_h" "$runs" "${photos[@]}"

# Per photo: tjbench at vitrine's scale and vipsthumbnail.
printf 'file\tscale\tdecoded\ttj_ms\ttj_note\tvit_ms\tvips_ms\tvips_note\tpillow_ms\tpillow_note\n' >"$tmp/data.tsv"
for photo in "${photos[@]}"; do
    name=$(basename "$photo")
    row=$(awk -F'\t' -v n="$name" 'NR > 1 && $1 == n { print; exit }' "$tmp/vitrine.tsv")
    [[ -n $row ]] || continue
    IFS=$'\t' read -r _ _ _ scale decoded _ vit_ms _ <<<"$row"

    (cd "$tmp" && tjbench "$photo" -scale "$scale" -bgrx -nowrite -benchtime 1 -warmup 0.3) \
        >"$tmp/tjbench.log" 2>&1 || true
    IFS=$US read -r tj_ms tj_decoded tj_info < <(helper tjbench-ms "$tmp/tjbench.log")
    tj_note=""
    if [[ $tj_ms == n/a ]]; then
        tj_note=$tj_info
    else
        if [[ -n $tj_decoded && $tj_decoded != "$decoded" ]]; then
            tj_note="decoded $tj_decoded, vitrine $decoded. "
        fi
        if [[ $tj_info != *BGRX* ]]; then
            tj_note+="timed as '$tj_info' (not BGRX)"
        fi
    fi

    IFS=$US read -r vips_ms vips_note < <(helper time-runs "$runs" \
        vipsthumbnail "$photo" --size "$panel" -o "$tmp/vips_out.jpg")

    pil_line=$(awk -F "$US" -v p="$photo" '$1 == p { print; exit }' "$tmp/pillow.tsv")
    IFS=$US read -r _ pillow_ms pillow_note <<<"$pil_line"

    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$scale" "$decoded" \
        "$tj_ms" "$tj_note" "$vit_ms" "$vips_ms" "$vips_note" \
        "${pillow_ms:-n/a}" "$pillow_note" >>"$tmp/data.tsv"
done
helper table "$tmp/data.tsv" "$TARGET"
echo

# ---------------------------------------------------------------- peak RSS
printf 'file\tvit_bench\tvit_time\tvips\tpillow\n' >"$tmp/rss.tsv"
rss_of() { # FILE-FOR-%M CMD...: peak RSS KiB of CMD, or n/a if it fails
    local out=$1
    shift
    if /usr/bin/time -f %M -o "$out" "$@" >/dev/null 2>&1; then
        tail -n 1 "$out"
    else
        echo n/a
    fi
}
for photo in "${photos[@]}"; do
    name=$(basename "$photo")
    vit_bench=n/a # only when the photo was rendered (a skipped photo still reports the process's RSS)
    if "$vitrine" bench "$photo" --panel "$panel" --runs 1 --tsv >"$tmp/bench1.tsv" 2>/dev/null; then
        vit_bench=$(awk -F'\t' '$1 == "peak_rss_kib" { print $2 }' "$tmp/bench1.tsv")
    fi
    vit_time=$(rss_of "$tmp/time.out" "$vitrine" render "$photo" --panel "$panel" \
        --fit contain --output "$tmp/vitrine_out.ppm")
    vips_rss=$(rss_of "$tmp/time.out" vipsthumbnail "$photo" --size "$panel" -o "$tmp/vips_out.jpg")
    pil_rss=$(rss_of "$tmp/time.out" "$PY" "$tmp/helper.py" pillow-oneshot "$photo" "$panel_w" "$panel_h")
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "${vit_bench:-n/a}" "$vit_time" "$vips_rss" "$pil_rss" >>"$tmp/rss.tsv"
done
helper rss-table "$tmp/rss.tsv"

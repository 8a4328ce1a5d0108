#!/usr/bin/python3
"""What a `{place}` lookup costs, against a reference measured in the same run: `vitrine bench --places` times
lookups in data/places.vgeo one by one (as captions make them) for photo-like points (a random place moved up to
2 km) and points anywhere on the globe, and the nearest place found by reading every record of the same mapped
file; three runs, medians. Also the index's size on disk and gzipped (what a package or a download carries).

Usage: places.py [--vitrine PATH] [--index FILE] [--runs N]
"""
import argparse
import gzip
import os
import statistics
import subprocess

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vitrine", default=f"{REPO}/.build/release/vitrine")
    parser.add_argument("--index", default=f"{REPO}/data/places.vgeo")
    parser.add_argument("--runs", type=int, default=20000, help="lookups per set and run (default 20000)")
    args = parser.parse_args()
    rows = {}
    for _ in range(3):
        out = subprocess.run([args.vitrine, "bench", "--places", args.index, "--runs", str(args.runs), "--tsv"],
                             check=True, capture_output=True, text=True).stdout.splitlines()
        header = out[0].split("\t")
        for line in out[1:]:
            row = dict(zip(header, line.split("\t")))
            rows.setdefault(row["points"], []).append(row)
    with open(args.index, "rb") as f:
        data = f.read()
    print(f"index {args.index}: {len(data):,} bytes ({len(data) / 2**20:.2f} MiB), "
          f"gzip -9 {len(gzip.compress(data, 9)):,} bytes")
    print(f"{'points':<13}{'lookups':>9}{'found':>8}{'median µs':>11}{'p99 µs':>9}{'scan µs':>10}"
          f"{'scan/lookup':>13}{'differ':>8}")
    for points, runs in rows.items():
        def median(key):
            return statistics.median(float(run[key]) for run in runs)
        print(f"{points:<13}{runs[0]['lookups']:>9}{runs[0]['found']:>8}{median('lookup_median_us'):>11.2f}"
              f"{median('lookup_p99_us'):>9.2f}{median('scan_median_us'):>10.0f}{median('scan_per_lookup'):>13.0f}"
              f"{max(int(run['differ']) for run in runs):>8}")


if __name__ == "__main__":
    main()

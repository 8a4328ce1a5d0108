#!/bin/sh
# The sanitizer reports every process of a test run wrote into FOLDER (ASAN_OPTIONS or
# TSAN_OPTIONS=log_path=FOLDER/report): none is a pass; otherwise each report's summary, the first report whole,
# and exit 1.
set -eu
folder=$1
reports=$(find "$folder" -type f -name 'report.*' | sort)
if [ -z "$reports" ]; then
    echo "sanitizer reports: none"
    exit 0
fi
count=$(echo "$reports" | wc -l)
echo "sanitizer reports: $count process(es) reported, in $folder"
for report in $reports; do
    echo "--- $report"
    grep -E '^(WARNING|SUMMARY|ERROR):' "$report" | sort | uniq -c
done
first=$(echo "$reports" | head -n 1)
echo "--- the first report whole: $first"
head -n 200 "$first"
exit 1

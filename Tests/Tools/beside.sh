#!/usr/bin/env bash
# beside.sh MAKE BACKGROUND TARGET...: runs `make BACKGROUND` beside `make TARGET` for each TARGET in turn (stopping
# at the first that fails), then prints BACKGROUND's output and every part's time; exits 1 if any part failed.
# For one-CPU guests that mostly wait (the service test's systemd, a sensor idle for its minute): under TCG each
# keeps one core busy, and a 2-core machine has the other one free.
set -uo pipefail

make=$1
background=$2
shift 2
log=$(mktemp)
times=$(mktemp)
trap 'rm -f "$log" "$times"' EXIT

begun=$(date +%s)
"$make" --no-print-directory "$background" >"$log" 2>&1 &
pid=$!
status=0
for target in "$@"; do
  start=$(date +%s)
  "$make" --no-print-directory "$target"
  result=$?
  echo "$target $(($(date +%s) - start)) $([ "$result" -eq 0 ] && echo ok || echo "FAILED (exit $result)")" >>"$times"
  if [ "$result" -ne 0 ]; then
    status=1
    break
  fi
done
wait "$pid"
result=$?
echo "$background $(($(date +%s) - begun)) $([ "$result" -eq 0 ] && echo ok || echo "FAILED (exit $result)")" >>"$times"
[ "$result" -eq 0 ] || status=1

echo "---- $background, run beside the others:"
cat "$log"
echo "---- beside.sh: each part's own time"
while read -r name seconds outcome; do
  printf '  %-20s %5s s  %s\n' "$name" "$seconds" "$outcome"
done <"$times"
exit "$status"

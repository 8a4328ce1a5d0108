#!/usr/bin/env bash
# Runs make targets one after another and times each: stages.sh MAKE TARGET... stops at the first that fails and
# prints a table of the stages' times either way. With STAGE_TIMES set, each stage's line is also appended to that
# file, so .ci/run can print one table over several calls (stages.sh --table FILE).
set -uo pipefail

table() {
  local total=0
  printf '\n%-22s %9s  %s\n' stage seconds result
  while read -r name seconds result; do
    printf '%-22s %9s  %s\n' "$name" "$seconds" "$result"
    total=$((total + seconds))
  done <"$1"
  printf '%-22s %9s  (%d min %02d s)\n' total "$total" $((total / 60)) $((total % 60))
}

if [ "${1:-}" = --table ]; then
  table "$2"
  exit 0
fi

make=$1
shift
lines=$(mktemp)
trap 'rm -f "$lines"' EXIT
status=0
for target in "$@"; do
  start=$(date +%s)
  "$make" --no-print-directory "$target"
  status=$?
  result=ok
  [ "$status" -eq 0 ] || result="FAILED (exit $status)"
  line="$target $(($(date +%s) - start)) $result"
  echo "$line" >>"$lines"
  [ -z "${STAGE_TIMES:-}" ] || echo "$line" >>"$STAGE_TIMES"
  [ "$status" -eq 0 ] || break
done
table "$lines"
exit "$status"

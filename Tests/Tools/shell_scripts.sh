#!/bin/bash
# Lists every shell script of the repository, one per line, for `make shellcheck` and the deploy test's shellcheck
# round, so the two check the same files: *.sh under deploy/, Tests/ and .ci/, and files there whose first line
# runs sh, bash or dash (e.g. .ci/run). Run from the repository's root.
set -euo pipefail
find deploy Tests .ci -type f ! -path '*/__pycache__/*' | sort | while IFS= read -r file; do
    case $file in
    *.sh) printf '%s\n' "$file" ;;
    *) if head -n 1 "$file" | grep -qE '^#!.*[/ ](ba|da)?sh([[:space:]]|$)'; then printf '%s\n' "$file"; fi ;;
    esac
done

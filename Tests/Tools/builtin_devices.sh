#!/bin/bash
# shellcheck disable=SC2016 # the backquotes and $ below are Swift text written out, not expansions
# Writes Sources/VitrineCore/BuiltInDeviceTable.swift from Config/devices.json: the device table compiled into the
# binary, so `vitrine play --library DIR` plays with no file beside it. `make builtin-devices` runs this; a unit
# test fails when the two differ.
set -euo pipefail
cd "$(dirname "$0")/../.."
table=Config/devices.json
if grep -q '"""#' "$table"; then
    echo "builtin_devices.sh: $table contains \"\"\"#, which would end the raw string" >&2
    exit 1
fi
out=Sources/VitrineCore/BuiltInDeviceTable.swift
{
    echo '// swift-format-ignore-file'
    echo '// Made from Config/devices.json by `make builtin-devices` (Tests/Tools/builtin_devices.sh); do not edit.'
    echo ''
    echo '/// The device table compiled in: used when neither `--devices`, the config'"'"'s `deviceTable` nor'
    echo '/// /etc/vitrine/devices.json names one, so the binary plays anywhere on its own.'
    echo 'public enum BuiltInDeviceTable {'
    echo '    /// How errors and `check-config` name it.'
    echo '    public static let name = "the built-in device table"'
    echo '    public static let json = #"""'
    cat "$table"
    echo '"""#'
    echo '}'
} >"$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out"

#!/usr/bin/env bash
# Builds the libFuzzer targets (Tests/Fuzz/Targets/*.swift) into .build/fuzz/: VitrineCore, with the JPEG, PNG
# and WebP header readers, the HEIF box reader, the VP8L decoder and the EXIF reader from VitrineImage, compiled with coverage instrumentation and AddressSanitizer, linked with
# libFuzzer's main from the toolchain (swiftc -sanitize=fuzzer). Usage: Tests/Fuzz/build.sh [OUTPUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-.build/fuzz}
swiftc=${SWIFTC:-swiftc}
mkdir -p "$out/modules"
flags=(-O -g "-sanitize=fuzzer,address" -parse-as-library -swift-version 6 -warnings-as-errors -package-name vitrine)

# One module with what the fuzzers reach: the core, the VitrineImage files the header parsers need and the
# platform's FileError they name (they import only VitrineCore and VitrinePlatform, so they are rebuilt here inside
# it).
core=(Sources/VitrineCore/*.swift)
image=(Sources/VitrineImage/JPEGHeader.swift Sources/VitrineImage/ExifReader.swift
    Sources/VitrineImage/ImageError.swift Sources/VitrineImage/ImageFormat.swift Sources/VitrineImage/PNGHeader.swift
    Sources/VitrineImage/WebPHeader.swift Sources/VitrineImage/HEIFHeader.swift Sources/VitrineImage/ImageHeader.swift
    Sources/VitrineImage/HEIFContainer.swift Sources/VitrineImage/HEIFGrid.swift Sources/VitrineImage/ColorProfile.swift
    Sources/VitrineImage/VP8LCodes.swift Sources/VitrineImage/ClipHeader.swift
    Sources/VitrineImage/VP8LDecoder.swift Sources/VitrineImage/VP8LTransform.swift
    Sources/VitrinePlatform/FileError.swift)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for file in "${image[@]}"; do
    # Same module now: the import would name a module that is not there.
    grep -v -e '^import VitrineCore$' -e '^import VitrinePlatform$' "$file" >"$work/$(basename "$file")"
done
"$swiftc" "${flags[@]}" -j 2 -emit-library -static -emit-module -module-name VitrineCore \
    -emit-module-path "$out/modules/VitrineCore.swiftmodule" -o "$out/libVitrineCore.a" \
    "${core[@]}" "$work"/*.swift

for target in Tests/Fuzz/Targets/*.swift; do
    name=$(basename "$target" .swift)
    # gold warns once per ASan helper symbol that it cannot export; those warnings say nothing about the build.
    "$swiftc" "${flags[@]}" -I "$out/modules" -L "$out" -lVitrineCore -module-name "fuzz_$name" \
        -o "$out/$name" "$target" 2> >(grep -v "Cannot export local symbol '__asan" >&2)
    echo "built $out/$name"
done

#!/usr/bin/env python3
"""Every import in Sources/ and Tests/ against Package.swift: a target imports only the targets it declares, so the
rooms' layering holds whatever SwiftPM happens to have built first; VitrineCore imports nothing but the standard
library's Synchronization (no Glibc: no system call). And no Synchronization `Mutex` in Sources/: ThreadSanitizer
cannot see its contended hand-over (a futex, inside the kernel), so `make test-tsan` reports races that are none;
`Locked` (a pthread mutex) or atomics instead. Part of `make lint`."""
import glob
import os
import re
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
package = open(os.path.join(root, "Package.swift")).read()
# The toolchain's modules every target may use; the system's C library is not among them for the core.
toolchain = {"Glibc", "Musl", "Synchronization", "Testing", "XCTest"}
pure = {"VitrineCore": {"Synchronization"}}

targets = {}
declarations = re.split(r"\.(?=(?:target|executableTarget|testTarget|systemLibrary)\()", package)
for declaration in declarations[1:]:
    kind = declaration.split("(", 1)[0]
    name = re.search(r"name:\s*\"(\w+)\"", declaration).group(1)
    if kind == "systemLibrary":
        continue
    dependencies = re.search(r"dependencies:\s*\[(.*?)\]", declaration, re.S)
    path = re.search(r"path:\s*\"([^\"]+)\"", declaration)
    folder = path.group(1) if path else (f"Tests/{name}" if kind == "testTarget" else f"Sources/{name}")
    targets[name] = (folder, set(re.findall(r"\"(\w+)\"", dependencies.group(1))) if dependencies else set())

problems = []
for name, (folder, dependencies) in sorted(targets.items()):
    files = glob.glob(os.path.join(root, folder, "*.swift"))
    # A C target (CLazyLink: stubs and a loader) imports nothing a Swift file could.
    if not files and glob.glob(os.path.join(root, folder, "*.c")):
        continue
    if not files:
        problems.append(f"{name}: no Swift files in {folder}")
    for file in files:
        for number, line in enumerate(open(file), 1):
            if folder.startswith("Sources") and re.search(r"\bMutex<", line):
                problems.append(f"{os.path.relpath(file, root)}:{number}: Synchronization's Mutex; use Locked or atomics")
            imported = re.match(r"^\s*(?:@testable\s+)?import\s+(\w+)", line)
            if not imported:
                continue
            module = imported.group(1)
            relative = os.path.relpath(file, root)
            if name in pure and module not in pure[name]:
                problems.append(f"{relative}:{number}: {name} must not import {module}")
            elif module not in dependencies and module not in toolchain and module != name:
                problems.append(f"{relative}:{number}: {name} imports {module}, which Package.swift does not give it")

for problem in problems:
    print(problem)
print(f"layering: {len(targets)} targets, {len(problems)} problems")
sys.exit(1 if problems else 0)

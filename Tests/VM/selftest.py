#!/usr/bin/python3
"""Self-test of the VM harness: boots each panel (virtio-gpu and std VGA/bochs-drm, at 800x480 and 1080x1920),
checks that the DRM connector's preferred mode is the panel size, sets that mode with modetest's test pattern
and checks the host's screendump. Prints "N passed, M failed"; exits 0 (with a skip line) when check() fails."""
import re
import sys
import time

from vm import VM, check

PANELS = [("virtio", 800, 480), ("virtio", 1080, 1920), ("bochs", 800, 480), ("bochs", 1080, 1920)]


def connected(listing):
    """(connector id, name, preferred mode "WxH") of the first connected connector in `modetest -c` output."""
    found = re.search(r"^(\d+)\s+\d+\s+connected\s+(\S+).*?^\s+#0 (\d+x\d+) .*?type: preferred", listing,
                      re.MULTILINE | re.DOTALL)
    return found.groups() if found else None


def test_panel(device, width, height):
    with VM(device, width, height) as vm:
        print(f"  booted in {vm.boot_seconds:.1f} s (guest uptime {vm.ready.split()[1]} s)")
        rc, listing = vm.run(f"modetest -M {vm.driver} -c", timeout=60)
        assert rc == 0, f"modetest -c failed ({rc}): {listing}"
        assert connected(listing), f"no connected connector with a preferred mode:\n{listing}"
        connector, name, mode = connected(listing)
        print(f"  connector {connector} {name}, preferred mode {mode}")
        assert mode == f"{width}x{height}", f"preferred mode {mode}, panel {width}x{height}"

        # modetest -s shows its test pattern until a key is pressed: give it a stdin that never ends
        # (and line-buffered stdout, to see "setting mode" before it exits).
        vm.spawn("modetest", f"sleep 600 | stdbuf -oL modetest -M {vm.driver} -s {connector}:{mode}")
        rc, output = vm.run("for i in $(seq 100); do grep -q 'setting mode' /share/modetest.out && exit 0;"
                            " sleep 0.1; done; exit 1", timeout=30)
        assert rc == 0, "modetest did not set the mode: " + open(f"{vm.share}/modetest.out").read()
        time.sleep(0.5)
        picture = vm.screendump()
        assert picture.size == (width, height), f"screendump {picture.size}, panel {width}x{height}"
        colors = picture.getcolors(maxcolors=1 << 16)
        assert colors is None or len(colors) > 8, f"screendump shows no test pattern: {len(colors)} colors"
        print(f"  screendump {picture.size[0]}x{picture.size[1]}, {len(colors) if colors else 'many'} colors")
        rc, output = vm.stop("modetest")
        assert rc == 143, f"modetest did not end by SIGTERM ({rc}): {output}"


def main():
    ok, reason = check()
    if not ok:
        print(f"skip: VM self-test: {reason}")
        return 0
    passed = failed = 0
    for device, width, height in PANELS:
        print(f"{device} {width}x{height}", flush=True)
        started = time.monotonic()
        try:
            test_panel(device, width, height)
            passed += 1
            print(f"  ok ({time.monotonic() - started:.1f} s)", flush=True)
        except Exception as error:  # one panel failing must not stop the others
            failed += 1
            print(f"  FAIL ({time.monotonic() - started:.1f} s): {error}", flush=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

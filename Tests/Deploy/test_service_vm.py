#!/usr/bin/python3
"""deploy/vitrine.service under a real systemd 252, with the real binary on a real DRM driver.

Then, as an appliance (Tests/Deploy/appliance_guest.sh): the Debian package (`make deb`'s, built twice here, the
second a revision higher) installed with apt, the edited config kept and the show resumed across the upgrade,
`vitrine doctor` on a healthy and three broken installs, and `/` remounted read-only with the state folder three
ways (a partition of its own, tmpfs, read-only).

Boots Debian's kernel under QEMU like Tests/VM (the host's root read-only over 9p under a tmpfs overlay, bochs-drm
at 800x480), but hands PID 1 to systemd (Tests/Deploy/service_agent.sh). Once the system is up,
Tests/Deploy/service_guest.sh installs Vitrine with deploy/install.sh into the guest's running system and checks
the service: started by the installer with the player as `vitrine` owning tty1, a second install that leaves it
alone, restart, a crash, reload, the control socket, stop and start (the login prompt on tty1 handed over each
way), keys typed on a virtio keyboard (Ctrl-C, Ctrl-Z and Ctrl-\\ leave the same player playing; Ctrl+Alt+F2
switches VTs, and does nothing once `display.vtSwitching` is false), the watchdog, a crash loop ending with the
console back, and uninstall. Nothing reaches the host: guest
writes stay in the overlay. About nine minutes under TCG. Prints PASS/FAIL per check; exit 1 on a failure, 0 with
a SKIP line when QEMU or a kernel cannot be had.

    Tests/Deploy/test_service_vm.py --vitrine .build/release/vitrine
"""
import argparse
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "Tests", "VM"))
import vm  # noqa: E402  (Tests/VM/vm.py: kernel, initramfs, the QEMU checks)

UNIT = """[Unit]
Description=Vitrine service test (Tests/Deploy/service_guest.sh)
After=multi-user.target

[Service]
Type=oneshot
TimeoutStartSec=infinity
ExecStart=/bin/bash /share/service_guest.sh /share/source /share/vitrine
StandardOutput=file:/share/out.txt
StandardError=file:/share/err.txt
"""


class Keyboard:
    """Types on the guest's virtio keyboard over QMP when the guest asks: service_guest.sh writes /share/keys-N
    (one key combination a line, QEMU qcodes joined by '-', e.g. ctrl-alt-f2) and waits for keys-N.done."""

    def __init__(self, path, share):
        self.path, self.share, self.answered, self.sock = path, share, set(), None

    def qmp(self, command, **arguments):
        if self.sock is None:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(30)
            self.sock.connect(self.path)
            self.replies = self.sock.makefile("rb")
            self.replies.readline()
            self.qmp("qmp_capabilities")
        self.sock.sendall(json.dumps({"execute": command, "arguments": arguments}).encode() + b"\n")
        while True:
            reply = json.loads(self.replies.readline() or b"{}")
            if "return" in reply or "error" in reply or not reply:
                return reply

    def serve(self):
        for request in sorted(glob.glob(os.path.join(self.share, "keys-[0-9]*"))):
            if request.endswith((".done", ".tmp")) or request in self.answered:
                continue
            self.answered.add(request)
            with open(request) as f:
                combos = f.read().split()
            for combo in combos:
                self.qmp("send-key", keys=[{"type": "qcode", "data": key} for key in combo.split("-")], **{"hold-time": 100})
                time.sleep(0.3)
            with open(request + ".done", "w") as f:
                f.write("typed\n")

    def close(self):
        if self.sock is not None:
            self.replies.close()
            self.sock.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vitrine", default=os.path.join(REPO, ".build/release/vitrine"), help="the binary")
    parser.add_argument("--timeout", type=float, default=1200, help="seconds before the VM is given up on")
    args = parser.parse_args()
    if not os.access(args.vitrine, os.X_OK):
        print(f"test_service_vm.py: {args.vitrine} is not an executable file", file=sys.stderr)
        return 2
    ok, reason = vm.check()
    if not ok:
        return vm.skipped("service test in a VM", reason)
    kernel_path, version = vm.kernel()
    initrd = vm.initramfs(version)
    work = tempfile.mkdtemp(prefix="vitrine-service-")
    try:
        share = os.path.join(work, "share")
        os.mkdir(share)
        # The guest reads everything from the share: systemd-tmpfiles empties /tmp at boot, and so would a
        # checkout under /tmp disappear from under the test.
        shutil.copy(args.vitrine, os.path.join(share, "vitrine"))
        shutil.copy(os.path.join(HERE, "service_guest.sh"), share)
        shutil.copy(os.path.join(HERE, "appliance_guest.sh"), share)
        # The package twice, the second of a higher version (the upgrade), as `make deb` builds it.
        version = subprocess.run([args.vitrine, "--version"], capture_output=True, text=True).stdout.split()[-1]
        for revision in ("1", "2"):
            subprocess.run([os.path.join(REPO, "deploy", "make-deb.sh"), "--binary", args.vitrine, "--version",
                            f"{version}-{revision}", "--out", os.path.join(share, "debs")], check=True,
                           stdout=subprocess.DEVNULL)
        # An empty ext4 disk: /var/lib/vitrine's own partition under a read-only root.
        state_disk = os.path.join(work, "state.img")
        with open(state_disk, "wb") as f:
            f.truncate(32 << 20)
        subprocess.run(["mkfs.ext4", "-q", "-F", state_disk], check=True)
        for folder in ("deploy", "Config", "web", "data"):
            shutil.copytree(os.path.join(REPO, folder), os.path.join(share, "source", folder))
        with open(os.path.join(share, "vitrine-test.service"), "w") as f:
            f.write(UNIT)
        agent = os.path.join(work, "agent.sh")  # read by the guest before systemd runs, through the 9p root
        shutil.copy(os.path.join(HERE, "service_agent.sh"), agent)
        os.chmod(agent, 0o755)
        serial = os.path.join(work, "serial.log")
        command = [
            vm.QEMU, "-nodefaults", "-no-user-config",
            "-machine", "q35,accel=tcg", "-cpu", "max", "-smp", "1", "-m", "1024",
            "-kernel", kernel_path, "-initrd", initrd,
            "-append", f"console=ttyS0 panic=-1 vm.agent={agent} systemd.unit=multi-user.target "
                       "systemd.mask=postgresql.service systemd.mask=e2scrub_reap.service",
            "-display", "none", "-serial", f"file:{serial}", "-monitor", "none", "-no-reboot",
            "-fsdev", "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap",
            "-device", "virtio-9p-pci,fsdev=root,mount_tag=hostroot",
            "-fsdev", f"local,id=share,path={share},security_model=none",
            "-device", "virtio-9p-pci,fsdev=share,mount_tag=share",
            "-device", "VGA,xres=800,yres=480,vgamem_mb=64",
            "-device", "virtio-keyboard-pci",
            "-drive", f"file={state_disk},if=virtio,format=raw",
            "-qmp", f"unix:{work}/qmp.sock,server=on,wait=off",
        ]
        print(f"binary under test: {os.path.abspath(args.vitrine)}; booting systemd in QEMU (about nine minutes)")
        started = time.monotonic()
        with open(os.path.join(work, "qemu.log"), "wb") as log:
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                       preexec_fn=vm._die_with_parent)
            keyboard = Keyboard(os.path.join(work, "qmp.sock"), share)
            try:
                while process.poll() is None and time.monotonic() - started < args.timeout:
                    keyboard.serve()
                    time.sleep(0.2)
            except (OSError, ValueError) as error:
                print(f"FAIL typing on the guest's keyboard over QMP: {error}")
            finally:
                keyboard.close()
            if process.poll() is None:
                process.kill()
                process.wait()
        elapsed = time.monotonic() - started
        passed = failed = 0
        try:
            with open(os.path.join(share, "out.txt")) as f:
                lines = f.read().splitlines()
        except OSError:
            lines = []
        for line in lines:
            if line.startswith("CHECK "):
                _, result, rest = line.split(" ", 2)
                print(("PASS " if result == "ok" else "FAIL ") + rest)
                passed += result == "ok"
                failed += result != "ok"
            elif line.startswith("INFO "):
                print("    " + line[5:])
        if not lines or lines[-1] != "INFO --- done":
            failed += 1
            print(f"FAIL the guest ran to the end (QEMU exit {process.returncode} after {elapsed:.0f} s)")
            for name in ("err.txt",):
                path = os.path.join(share, name)
                if os.path.exists(path):
                    print(open(path).read()[-2000:])
            with open(serial, errors="replace") as f:
                print("".join(f.readlines()[-40:]))
        print(f"{passed} passed, {failed} failed ({elapsed:.0f} s)")
        return 1 if failed else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

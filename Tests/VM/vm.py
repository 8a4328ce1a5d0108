#!/usr/bin/python3
"""Run commands inside a real Linux kernel with a virtual DRM panel, and take screendumps from the host.

    from vm import VM, check
    ok, reason = check()
    with VM(device="bochs", width=1080, height=1920) as vm:
        rc, out = vm.run("modetest -M bochs-drm -c")
        vm.spawn("player", "exec vitrine play --display drm")   # runs in the background
        image = vm.screendump()                                 # PIL.Image, RGB, the panel's size
        rc, out = vm.stop("player")                             # SIGTERM, then its exit status and output

How: QEMU (TCG, this machine's /dev/kvm cannot run Debian's kernel) boots /boot/vmlinuz-* with a tiny busybox
initramfs (init.sh, cached under /tmp per kernel version) that mounts the host's / read-only over virtio-9p under
a tmpfs overlay and hands over to agent.sh. So every host binary runs unchanged in the guest, and guest writes
never reach the host. A second, writable 9p share (host: vm.share, guest: /share) carries commands and results.
Panels: "virtio" = virtio-gpu-pci (driver virtio_gpu), "bochs" = std VGA (driver bochs-drm), "qxl" = qxl-vga,
"cirrus" = cirrus-vga; xres/yres become the preferred mode (not on cirrus). `preload` names kernel modules loaded
before the display driver binds (vgem makes a render-only card0, as v3d is on a Raspberry Pi 4/5). CLI: vm.py --help.
"""
import argparse
import ctypes
import glob
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = "/tmp/vitrine-vm"
# VITRINE_QEMU names another binary; a name that is not there makes QEMU unavailable (how the CI=true failure of
# a missing prerequisite is checked).
QEMU = os.environ.get("VITRINE_QEMU", "qemu-system-x86_64")
BUSYBOX = "/bin/busybox"
PACKAGES = ["qemu-system-x86", "linux-image-amd64", "busybox-static", "cpio", "libdrm-tests"]
INITRAMFS_MODULES = ["virtio_pci", "9pnet_virtio", "9p", "overlay"]
# device -> DRM driver name (modetest -M). qxl and cirrus have no size control of their own here: cirrus comes up at
# its preferred 1024x768, qxl takes xres/yres.
# "none" has no display device: the card comes from a module the test loads (vkms, with `insmod`).
DRIVERS = {"virtio": "virtio_gpu", "bochs": "bochs-drm", "qxl": "qxl", "cirrus": "cirrus", "none": None}


def kernel():
    """(path, version) of the newest /boot/vmlinuz-* whose modules are installed, or None."""
    def natural(path):
        return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path)]
    for path in sorted(glob.glob("/boot/vmlinuz-*"), key=natural, reverse=True):
        version = path[len("/boot/vmlinuz-"):]
        if os.path.isdir(f"/lib/modules/{version}") and os.access(path, os.R_OK):
            return path, version
    return None


def newer_kernel():
    """(path, version, root) of the newer guest kernel that newer_kernel.sh unpacks (its vkms has Y'CbCr planes);
    raises RuntimeError with the script's reason when it cannot be had."""
    made = subprocess.run([f"{HERE}/newer_kernel.sh"], capture_output=True, text=True)
    if made.returncode != 0:
        raise RuntimeError(f"no newer kernel: {made.stderr.strip()[-400:]}")
    version, root = made.stdout.split()
    return f"{root}/usr/lib/modules/{version}/vmlinuz", version, root


def _missing():
    missing = []
    if not shutil.which(QEMU):
        missing.append(QEMU)
    if not kernel():
        missing.append("a /boot/vmlinuz-* kernel with its /lib/modules")
    busybox = subprocess.run(["ldd", BUSYBOX], capture_output=True, text=True) if os.path.exists(BUSYBOX) else None
    if busybox is None or "not a dynamic executable" not in busybox.stdout + busybox.stderr:
        missing.append(f"a static {BUSYBOX} (busybox-static)")
    if not shutil.which("cpio"):
        missing.append("cpio")
    return missing


def check():
    """(ok, reason): can this machine boot the VM? Installs the packages with apt-get when missing and root."""
    missing = _missing()
    if not missing:
        return True, "ok"
    if os.geteuid() != 0:
        return False, "missing " + ", ".join(missing) + f" (install as root: apt-get install {' '.join(PACKAGES)})"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = ["apt-get", "-o", "DPkg::Lock::Timeout=300", "install", "-y", *PACKAGES]
    update = ["apt-get", "-o", "DPkg::Lock::Timeout=300", "update"]
    try:
        steps = [install] if glob.glob("/var/lib/apt/lists/*_Packages") else [update, install]
        result = None
        for command in steps:
            result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1200)
        if result.returncode != 0 and steps == [install]:  # stale lists: update once, then try again
            for command in (update, install):
                result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1200)
    except (OSError, subprocess.TimeoutExpired) as error:
        return False, f"apt-get failed: {error}"
    missing = _missing()
    if result.returncode != 0 or missing:
        tail = (result.stderr or result.stdout).strip().splitlines()[-1:] or [""]
        return False, f"apt-get install failed (exit {result.returncode}: {tail[0]}); missing " + ", ".join(missing)
    return True, "ok (installed " + " ".join(PACKAGES) + ")"


def arguments(doc, add=None):
    """The options of a VM test file: --vitrine (the release build by default, made absolute) and what `add` adds to
    the parser."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vitrine", default=os.path.join(HERE, "..", "..", ".build", "release", "vitrine"))
    if add:
        add(parser)
    args = parser.parse_args()
    args.vitrine = os.path.abspath(args.vitrine)
    return args


def skipped(what, reason):
    """Says why `what` cannot run here; the exit status: 0 locally, 1 under CI=true (a skip is not a pass)."""
    under_ci = os.environ.get("CI") == "true"
    print(f"{what} {'FAILED (CI=true): cannot run' if under_ci else 'skipped'}: {reason}")
    return 1 if under_ci else 0


def initramfs(version, root=None):
    """Path of the initramfs for kernel `version` (its modules under `root`, else the host's): busybox, the
    9p/overlay modules and init.sh. Built once."""
    base = ["-d", root] if root else []
    listing = subprocess.run(["modprobe", *base, "--show-depends", "-a", "-S", version, *INITRAMFS_MODULES],
                             capture_output=True, text=True, check=True).stdout
    modules = []
    for line in listing.splitlines():  # "insmod /lib/modules/.../x.ko " in load order, or "builtin x"
        words = line.split()
        if words and words[0] == "insmod" and words[1] not in modules:
            modules.append(words[1])
    with open(os.path.join(HERE, "init.sh"), "rb") as f:
        init = f.read()
    key = hashlib.sha256(init + "\n".join(modules).encode() + str(os.path.getmtime(BUSYBOX)).encode())
    path = f"{CACHE}/initramfs-{version}-{key.hexdigest()[:12]}.cpio"
    if os.path.exists(path):
        return path
    os.makedirs(CACHE, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as root:
        for directory in ("bin", "dev", "proc", "modules", "lower", "rw", "newroot"):
            os.mkdir(os.path.join(root, directory))
        shutil.copy(BUSYBOX, f"{root}/bin/busybox")
        applets = subprocess.run([BUSYBOX, "--list"], capture_output=True, text=True, check=True).stdout.split()
        for applet in set(applets) - {"busybox"}:
            os.symlink("busybox", f"{root}/bin/{applet}")
        names = []
        for module in modules:
            name = os.path.basename(module)
            if name.endswith(".ko"):
                shutil.copy(module, f"{root}/modules/{name}")
            elif name.endswith((".ko.xz", ".ko.gz", ".ko.zst")):  # busybox insmod wants plain modules
                tool = {"xz": "xz", "gz": "gzip", "zst": "zstd"}[name.rsplit(".", 1)[1]]
                name = name.rsplit(".", 1)[0]
                with open(f"{root}/modules/{name}", "wb") as out:
                    subprocess.run([tool, "-dc", module], stdout=out, check=True)
            else:
                raise RuntimeError(f"unexpected module file {module}")
            names.append(name)
        with open(f"{root}/modules/order", "w") as f:
            f.write("\n".join(names) + "\n")
        with open(f"{root}/init", "wb") as f:
            f.write(init)
        os.chmod(f"{root}/init", 0o755)
        with open(f"{root}.cpio", "wb") as out:  # unique name: several builds may race
            subprocess.run("find . | cpio -o -H newc -R 0:0 --quiet", shell=True, cwd=root, stdout=out, check=True)
        os.replace(f"{root}.cpio", path)
    return path


def _die_with_parent():
    """In the QEMU child: get SIGKILL when the Python process dies, even by SIGKILL (prctl PR_SET_PDEATHSIG)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)


class VM:
    """A booted guest; use as a context manager. Attributes: share (host folder = guest /share), boot_seconds."""

    def __init__(self, device="virtio", width=800, height=480, memory_mb=1024, share=None, boot_timeout=120,
                 inputs=False, preload=(), insmod=(), cpus=1, newer=False, options=(), outputs=1, extra=()):
        if device not in DRIVERS:
            raise ValueError(f"device must be one of {sorted(DRIVERS)}")
        self.device, self.width, self.height, self.memory_mb = device, width, height, memory_mb
        self.driver = DRIVERS[device]
        self.boot_timeout = boot_timeout
        self.inputs = inputs  # a virtio keyboard and tablet, driven with key() and the QMP input-send-event
        self.preload = list(preload)
        self.insmod = list(insmod)  # module files (.ko) loaded after `preload`, e.g. an out-of-tree vkms.ko
        # Module parameters ("vkms.enable_overlay=1") on the kernel's command line, where modprobe reads them.
        self.options = list(options)
        # virtio-gpu heads (connectors Virtual-1, Virtual-2, ...); each head's picture is screendump(head=N).
        self.outputs = outputs
        # More QEMU arguments: a disk (`-blockdev ... -device virtio-blk-pci,...`) the test brings.
        self.extra = list(extra)
        # Two CPUs where a test needs the player's thread and a decoding thread at once (a Pi has four); TCG then
        # runs them on two host threads (MTTCG).
        self.cpus = cpus
        # newer: boot the kernel newer_kernel.sh unpacks (vkms with Y'CbCr planes) instead of the host's /boot one.
        self.newer = newer
        self._modules = None
        self.share = share
        self.boot_seconds = None
        self.ready = ""  # the agent's ready file: uptime, kernel, cards
        self.process = None
        self._qmp = None
        self._commands = 0
        self._dir = None
        self._own_share = share is None

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def qemu_arguments(self, kernel_path, initrd):
        if self.device == "virtio":
            panel = ["-device", f"virtio-gpu-pci,id=video0,xres={self.width},yres={self.height},max_outputs={self.outputs}"]
        elif self.device == "qxl":
            panel = ["-device", f"qxl-vga,xres={self.width},yres={self.height}"]
        elif self.device == "cirrus":
            panel = ["-device", "cirrus-vga"]
        elif self.device == "none":
            panel = []
        else:
            panel = ["-device", f"VGA,xres={self.width},yres={self.height},vgamem_mb=64"]
        preload = f" vm.preload={','.join(self.preload)}" if self.preload else ""
        preload += f" vm.insmod={','.join(self.insmod)}" if self.insmod else ""
        preload += f" vm.modules={self._modules}" if self._modules else ""
        preload += "".join(f" {option}" for option in self.options)
        return [
            QEMU, "-nodefaults", "-no-user-config",
            # avx2=off: QEMU 7.2's TCG runs dav1d's AVX2 code wrong (an AVIF decodes to smeared blocks in the
            # guest and bit-exact on the host); without AVX2 dav1d takes its SSE4 paths, which it emulates right.
            "-machine", "q35,accel=tcg", "-cpu", "max,avx2=off", "-smp", str(self.cpus), "-m", str(self.memory_mb),
            "-kernel", kernel_path, "-initrd", initrd,
            "-append", f"console=ttyS0 quiet panic=-1 vm.agent={HERE}/agent.sh{preload}",
            "-display", "none", "-serial", f"file:{self.serial_log}", "-monitor", "none", "-no-reboot",
            "-qmp", f"unix:{self._dir}/qmp.sock,server=on,wait=off",
            "-fsdev", "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap",
            "-device", "virtio-9p-pci,fsdev=root,mount_tag=hostroot",
            "-fsdev", f"local,id=share,path={self.share},security_model=none",
            "-device", "virtio-9p-pci,fsdev=share,mount_tag=share",
            *panel,
            *(["-device", "virtio-keyboard-pci", "-device", "virtio-tablet-pci"] if self.inputs else []),
            *self.extra,
        ]

    def key(self, qcode, hold=0.05):
        """Press and release a key on the virtio keyboard (QEMU qcode, e.g. "right", "pgdn", "spc", "1")."""
        for down in (True, False):
            self.qmp("input-send-event", events=[{"type": "key", "data": {"down": down,
                                                                          "key": {"type": "qcode", "data": qcode}}}])
            time.sleep(hold if down else 0)

    def touch(self, points, seconds=0.2):
        """The tablet as one finger: button down at the first (x, y) in 0...1, moved through the rest, up."""
        def move(x, y):
            return [{"type": "abs", "data": {"axis": "x", "value": int(x * 32767)}},
                    {"type": "abs", "data": {"axis": "y", "value": int(y * 32767)}}]
        x, y = points[0]
        self.qmp("input-send-event", events=move(x, y))
        self.qmp("input-send-event", events=[{"type": "btn", "data": {"down": True, "button": "left"}}])
        for x, y in points[1:]:
            time.sleep(seconds / max(1, len(points) - 1))
            self.qmp("input-send-event", events=move(x, y))
        if len(points) == 1:
            time.sleep(seconds)
        self.qmp("input-send-event", events=[{"type": "btn", "data": {"down": False, "button": "left"}}])

    def start(self):
        ok, reason = check()
        if not ok:
            raise RuntimeError(reason)
        if self.newer:
            kernel_path, version, root = newer_kernel()
            self._modules = f"{root}/usr/lib/modules/{version}"
            initrd = initramfs(version, root)
        else:
            kernel_path, version = kernel()
            initrd = initramfs(version)
        self._dir = tempfile.mkdtemp(prefix="vitrine-vm-")
        self.serial_log = f"{self._dir}/serial.log"
        if self._own_share:
            self.share = f"{self._dir}/share"
            os.mkdir(self.share)
        for pattern in ("ready", "cmd-*", "rc-*"):  # a reused share must not look ready or answered
            for stale in glob.glob(os.path.join(self.share, pattern)):
                os.unlink(stale)
        started = time.monotonic()
        with open(f"{self._dir}/qemu.log", "wb") as log:
            self.process = subprocess.Popen(self.qemu_arguments(kernel_path, initrd), stdin=subprocess.DEVNULL,
                                            stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        ready = os.path.join(self.share, "ready")
        self._wait_for(lambda: os.path.exists(ready), self.boot_timeout, "the agent to start")
        self.boot_seconds = time.monotonic() - started
        with open(ready) as f:
            self.ready = f.read()
        if "card /dev/dri/card0" not in self.ready:
            raise RuntimeError(f"no DRM card in the guest\n{self.ready}\n{self.log_tail()}")

    def wait_until(self, condition, timeout, what):
        """Polls condition() until it holds; raises TimeoutError after `timeout` s, RuntimeError if QEMU exits."""
        self._wait_for(condition, timeout, what)

    def _wait_for(self, condition, timeout, what):
        deadline = time.monotonic() + timeout
        while not condition():
            if self.process.poll() is not None:
                raise RuntimeError(f"QEMU exited ({self.process.returncode}) waiting for {what}\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out after {timeout} s waiting for {what}\n{self.log_tail()}")
            time.sleep(0.02)

    def log_tail(self, lines=60):
        """The end of the guest's serial console and QEMU's own output, for error messages."""
        text = ""
        for name in ("serial.log", "qemu.log"):
            try:
                with open(f"{self._dir}/{name}", errors="replace") as f:
                    text += f"--- {name}\n" + "".join(f.readlines()[-lines:])
            except OSError:
                pass
        return text

    def _submit(self, command, timeout):
        self._commands += 1
        n = self._commands
        path = os.path.join(self.share, f"cmd-{n}.sh")
        with open(path + ".tmp", "w") as f:
            f.write(f"# timeout {int(timeout)}\n{command}\n")
        os.replace(path + ".tmp", path)  # the agent only ever sees whole command files
        return n

    def run(self, command, timeout=60):
        """Run a shell command in the guest (cwd /root, stdin /dev/null); (exit status, stdout+stderr).
        The guest kills it after `timeout` s (status 124, or 137 if it ignores SIGTERM)."""
        n = self._submit(command, timeout)
        rc = os.path.join(self.share, f"rc-{n}")
        self._wait_for(lambda: os.path.exists(rc), timeout + 15, f"command {n}: {command}")
        with open(rc) as f:
            status = int(f.read())
        with open(os.path.join(self.share, f"out-{n}.txt"), errors="replace") as f:
            return status, f.read()

    def spawn(self, name, command):
        """Start `command` in the background as the leader of its own process group (use `exec prog` to make
        prog the leader). Its output goes to /share/NAME.out; stop() or wait() collects it."""
        share = "/share/" + name
        script = (f"rm -f {share}.pid {share}.rc\n"
                  f"( setsid sh -c {shlex.quote(command)} </dev/null >{share}.out 2>&1 & echo $! >{share}.pid;"
                  f" wait $!; echo $? >{share}.rc.tmp; mv {share}.rc.tmp {share}.rc ) >/dev/null 2>&1 &\n"
                  f"while [ ! -s {share}.pid ]; do sleep 0.02; done; cat {share}.pid")
        rc, out = self.run(script, timeout=30)
        if rc != 0:
            raise RuntimeError(f"could not start {name}: {out}")
        return int(out.split()[-1])

    def wait(self, name, timeout=60):
        """Wait for a spawned command to end: (exit status, output). 128+N means killed by signal N."""
        rc = os.path.join(self.share, f"{name}.rc")
        self._wait_for(lambda: os.path.exists(rc), timeout, f"{name} to exit")
        with open(rc) as f:
            status = int(f.read())
        with open(os.path.join(self.share, f"{name}.out"), errors="replace") as f:
            return status, f.read()

    def stop(self, name, sig="TERM", timeout=30):
        """Send signal `sig` (TERM, INT, KILL...) to a spawned command's process group, then wait() for it."""
        self.run(f"kill -{sig} -$(cat /share/{name}.pid)", timeout=10)
        return self.wait(name, timeout)

    def qmp(self, command, **arguments):
        """Execute a QMP command; returns its "return" value, raises RuntimeError on a QMP error."""
        if self._qmp is None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(30)
            sock.connect(f"{self._dir}/qmp.sock")
            self._qmp = (sock, sock.makefile("rb"))
            self._qmp[1].readline()  # greeting
            self.qmp("qmp_capabilities")
        sock, replies = self._qmp
        message = {"execute": command}
        if arguments:
            message["arguments"] = arguments
        sock.sendall(json.dumps(message).encode() + b"\n")
        while True:
            line = replies.readline()
            if not line:
                raise ConnectionError(f"QMP closed during {command}")
            reply = json.loads(line)
            if "return" in reply:
                return reply["return"]
            if "error" in reply:
                raise RuntimeError(f"QMP {command}: {reply['error'].get('desc')}")
            # anything else is an asynchronous event: skip it

    def screendump(self, head=0):
        """The panel's current picture as an RGB PIL.Image (QMP screendump writes a PPM on the host); `head` picks
        one of virtio-gpu's outputs."""
        from PIL import Image
        path = f"{self._dir}/screendump.ppm"
        if head:
            self.qmp("screendump", filename=path, device="video0", head=head)
        else:
            self.qmp("screendump", filename=path)
        with Image.open(path) as image:
            picture = image.convert("RGB")
        os.unlink(path)
        return picture

    def kill(self):
        """Cut the power: QEMU is killed at once, with whatever the guest had not written to its disks."""
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def close(self):
        """Power the guest off (sysrq o; QMP quit after 5 s; SIGKILL after 5 s more) and remove the temp files."""
        if self.process and self.process.poll() is None:
            try:
                self._submit("echo o > /proc/sysrq-trigger", 10)
                self.process.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                try:
                    self.qmp("quit")
                    self.process.wait(5)
                except (OSError, RuntimeError, subprocess.TimeoutExpired):
                    self.process.kill()
                    self.process.wait()
        if self._qmp:
            self._qmp[1].close()
            self._qmp[0].close()
            self._qmp = None
        if self._dir and not os.environ.get("VITRINE_VM_KEEP"):
            shutil.rmtree(self._dir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description="Boot a VM with a virtual DRM panel and run commands in it.")
    parser.add_argument("--check", action="store_true", help="only check (and install) the prerequisites")
    parser.add_argument("--device", choices=sorted(DRIVERS), default="virtio")
    parser.add_argument("--size", default="800x480", help="panel size WxH (default 800x480)")
    parser.add_argument("--memory", type=int, default=1024, help="guest memory in MB")
    parser.add_argument("--timeout", type=int, default=60, help="seconds per command")
    parser.add_argument("--screendump", metavar="FILE", help="after the commands, save the screen (PNG, PPM...)")
    parser.add_argument("commands", nargs="*", help="shell commands to run in the guest, one after another")
    args = parser.parse_args()
    ok, reason = check()
    if args.check or not ok:
        print(reason)
        return 0 if ok else 1
    width, height = (int(v) for v in args.size.lower().split("x"))
    status = 0
    with VM(args.device, width, height, args.memory) as vm:
        print(f"ready after {vm.boot_seconds:.1f} s; {vm.ready.strip()}", file=sys.stderr)
        for command in args.commands:
            status, output = vm.run(command, args.timeout)
            sys.stdout.write(output)
            print(f"[exit {status}] {command}", file=sys.stderr)
        if args.screendump:
            vm.screendump().save(args.screendump)
    return status


if __name__ == "__main__":
    sys.exit(main())

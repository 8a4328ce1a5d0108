#!/usr/bin/python3
"""A FUSE passthrough of SOURCE on MOUNT (python3-fusepy) that can be frozen, as a NAS on Wi-Fi stops answering:
while a file named as MOUNT plus `.freeze` exists beside it, every operation waits (as the kernel's requests to a
stalled server do); removing the file thaws it. (A signal would not do: Python runs its handlers on the main
thread, which sits in libfuse's loop.)

Usage: freezable_fs.py SOURCE MOUNT (runs in the foreground until unmounted with fusermount -u MOUNT)
"""
import errno
import os
import sys
import time

try:
    # Debian's python3-fusepy installs the module as fusepy; PyPI's as fuse.
    from fusepy import FUSE, FuseOSError, Operations
except ImportError:
    from fuse import FUSE, FuseOSError, Operations

CONTROL = None


class Thawed:
    """Waits while the control file exists."""

    @staticmethod
    def wait():
        while os.path.exists(CONTROL):
            time.sleep(0.02)


thawed = Thawed()


class Passthrough(Operations):
    def __init__(self, source):
        self.source = source

    def _path(self, path):
        thawed.wait()
        return os.path.join(self.source, path.lstrip("/"))

    def access(self, path, mode):
        if not os.access(self._path(path), mode):
            raise FuseOSError(errno.EACCES)

    def chmod(self, path, mode):
        return os.chmod(self._path(path), mode)

    def chown(self, path, uid, gid):
        return os.chown(self._path(path), uid, gid)

    def getattr(self, path, fh=None):
        status = os.lstat(self._path(path))
        return {key: getattr(status, key) for key in ("st_atime", "st_ctime", "st_gid", "st_mode", "st_mtime",
                                                       "st_nlink", "st_size", "st_uid")}

    def readdir(self, path, fh):
        return [".", ".."] + os.listdir(self._path(path))

    def readlink(self, path):
        return os.readlink(self._path(path))

    def mknod(self, path, mode, dev):
        return os.mknod(self._path(path), mode, dev)

    def rmdir(self, path):
        return os.rmdir(self._path(path))

    def mkdir(self, path, mode):
        return os.mkdir(self._path(path), mode)

    def statfs(self, path):
        status = os.statvfs(self._path(path))
        return {key: getattr(status, key) for key in ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail",
                                                       "f_ffree", "f_files", "f_flag", "f_frsize", "f_namemax")}

    def unlink(self, path):
        return os.unlink(self._path(path))

    def symlink(self, name, target):
        return os.symlink(target, self._path(name))

    def rename(self, old, new):
        return os.rename(self._path(old), self._path(new))

    def link(self, target, name):
        return os.link(self._path(name), self._path(target))

    def utimens(self, path, times=None):
        return os.utime(self._path(path), times)

    def open(self, path, flags):
        return os.open(self._path(path), flags)

    def create(self, path, mode, fi=None):
        return os.open(self._path(path), os.O_WRONLY | os.O_CREAT, mode)

    def read(self, path, length, offset, fh):
        thawed.wait()
        return os.pread(fh, length, offset)

    def write(self, path, buf, offset, fh):
        thawed.wait()
        return os.pwrite(fh, buf, offset)

    def truncate(self, path, length, fh=None):
        with open(self._path(path), "r+") as f:
            f.truncate(length)

    def flush(self, path, fh):
        thawed.wait()
        return 0

    def release(self, path, fh):
        return os.close(fh)

    def fsync(self, path, fdatasync, fh):
        thawed.wait()
        return os.fsync(fh)


def main():
    global CONTROL
    source, mount = sys.argv[1], sys.argv[2]
    CONTROL = os.path.abspath(mount).rstrip("/") + ".freeze"
    FUSE(Passthrough(source), mount, foreground=True, nothreads=False)


if __name__ == "__main__":
    main()

"""A FUSE file system whose one directory, /slow, takes SLOW seconds to look
up: a stand-in for the network or automount cwd that stalls a chdir.
Usage: slowfs.py MOUNTPOINT SECONDS (Debian: python3-fusepy, fuse3)."""
import errno
import stat
import sys
import time

try:
    from fusepy import FUSE, FuseOSError, Operations
except ImportError:  # the name fusepy has on PyPI
    from fuse import FUSE, FuseOSError, Operations


class Slow(Operations):
    def __init__(self, seconds):
        self.seconds = seconds

    def getattr(self, path, fh=None):
        if path == "/":
            return dict(st_mode=stat.S_IFDIR | 0o755, st_nlink=2)
        if path == "/slow":
            time.sleep(self.seconds)
            return dict(st_mode=stat.S_IFDIR | 0o755, st_nlink=2)
        raise FuseOSError(errno.ENOENT)

    def readdir(self, path, fh):
        return [".", "..", "slow"]


FUSE(Slow(float(sys.argv[2])), sys.argv[1], foreground=True, nothreads=False)

"""Durable, private file-system steps: the one private-file writer of zk2kraft.

Why these exist as one small module:
* `fsync_dir`: a file creation or rename is only durable once its directory is fsync'd (I5);
  one copy for the log writer, the lock and the staging/promotion code.
* Voter files hold decrypted broker passwords in clear (Kafka's log does too), so everything
  zk2kraft creates in a voter directory is private: files 0600, directories 0700 (I7).
  Reports (`--json`, `--html`, `snapshot --out`) and the journal describe a cluster's security
  set-up, so they are written the same way: `replace_private` / `atomic_write` is the one
  implementation (`verify` and `migrate` use it through `writers`' public API).
* A controller usually runs as its own user while zk2kraft may run as root, so what we create
  takes the owner and group of the voter directory (`Ownership.of_dir`): the controller can then
  read and lock what a root-run migration wrote.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "Ownership",
    "atomic_write",
    "fsync_dir",
    "make_private_dir",
    "open_private",
    "replace_private",
    "write_all",
]

log = logging.getLogger(__name__)

FILE_MODE = 0o600
"""Mode of every file zk2kraft creates in a voter directory."""

DIR_MODE = 0o700
"""Mode of every directory zk2kraft creates in (or as) a voter directory."""


def fsync_dir(path: Path) -> None:
    """fsync a directory so the names created or renamed in it survive a crash."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """Write every byte (os.write may write fewer than asked)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


@dataclass(frozen=True, slots=True)
class Ownership:
    """The owner and group new files and directories get (those of the voter directory)."""

    uid: int
    gid: int

    @classmethod
    def of_dir(cls, path: Path) -> Ownership:
        """The owner and group of `path` (an existing directory)."""
        st = os.stat(path)
        return cls(st.st_uid, st.st_gid)

    def apply_fd(self, fd: int) -> None:
        """Give an open file this ownership (no-op if it already has it)."""
        st = os.fstat(fd)
        if (st.st_uid, st.st_gid) == (self.uid, self.gid):
            return
        try:
            os.fchown(fd, self.uid, self.gid)
        except PermissionError:
            # Not root: our files stay ours, the only owner we may give them.
            log.debug("cannot give fd %d to %d:%d (not root)", fd, self.uid, self.gid)

    def apply(self, path: Path) -> None:
        """Give an existing path this ownership (no-op if it already has it)."""
        st = os.lstat(path)
        if (st.st_uid, st.st_gid) == (self.uid, self.gid):
            return
        try:
            os.lchown(path, self.uid, self.gid)
        except PermissionError:
            log.debug("cannot give %s to %d:%d (not root)", path, self.uid, self.gid)


def make_private_dir(path: Path, owner: Ownership | None) -> bool:
    """Create `path` (mode 0700, given ownership) if missing; its parent must exist.

    Returns:
        True if it was created now.

    Raises:
        OSError: it cannot be created (FileExistsError is not raised for an existing dir).
    """
    try:
        os.mkdir(path, DIR_MODE)
    except FileExistsError:
        if not path.is_dir():
            raise
        return False
    if owner is not None:
        owner.apply(path)
    return True


def open_private(path: Path, flags: int, owner: Ownership | None) -> int:
    """`os.open(path, flags | O_CREAT, 0600)`, giving a newly created file `owner`.

    Returns:
        The file descriptor.
    """
    fd = os.open(path, flags | os.O_CREAT, FILE_MODE)
    if owner is not None:
        try:
            owner.apply_fd(fd)
        except OSError:
            os.close(fd)
            raise
    return fd


@contextlib.contextmanager
def replace_private(path: str | os.PathLike[str], owner: Ownership | None = None
                    ) -> Iterator[BinaryIO]:
    """Open a temporary 0600 file next to `path`; on a clean exit, replace `path` with it durably.

    The file is 0600 from its first byte (never chmod'ed after the fact) and gets `owner`. Its
    name is unique to this process and created with `O_EXCL`, so no other writer's file and no
    planted link is ever opened. On a clean exit of the `with` body: flush, fsync, rename over
    `path`, fsync the directory, so `path` is complete or as it was, and survives a crash. On
    any error (or interrupt) the temporary file is removed and `path` is left as it was.

    Raises:
        OSError: any step failed.
    """
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as out:
            if owner is not None:
                owner.apply_fd(out.fileno())
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        except OSError as cleanup:
            log.debug("cannot remove %s: %s", tmp, cleanup)
        raise
    fsync_dir(target.parent)


def atomic_write(path: str | os.PathLike[str], data: bytes, owner: Ownership | None = None
                 ) -> None:
    """Replace `path` with `data` durably, 0600, owned by `owner` (see `replace_private`).

    Raises:
        OSError: any step failed (the temporary file is removed, `path` is unchanged).
    """
    with replace_private(path, owner) as out:
        out.write(data)

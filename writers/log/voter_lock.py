"""Kafka's own `.lock` on voter directories: one writer per voter set, and never a running Kafka.

Facts from Kafka 3.9 (`KafkaRaftManager.lockDataDir`, `kafka.utils.FileLock`): a controller
locks `<metadata.log.dir>/.lock` (`LogManager.LockFileName`) with `FileChannel.tryLock()` on a
channel opened read-write, the file created if missing. On Linux that is an exclusive POSIX
record lock over the whole file (`fcntl(F_SETLK, F_WRLCK)`, start 0, length 0), which is exactly
what `fcntl.lockf(fd, LOCK_EX | LOCK_NB)` takes. So zk2kraft and a Kafka controller exclude each
other on the same directory, and two zk2kraft runs exclude each other too.

Why the lock is held for a whole run (`hold_voter_locks`) and not per write: the outside audit
saw two overlapping `migrate` runs where one deleted the other's staging copy and the other then
promoted a half-written log and exited 0. Taking every voter's lock before any work, and keeping
it until the promoted logs are re-read, makes that impossible.

POSIX record locks belong to the process, not the descriptor: closing *any* descriptor of the
`.lock` file drops the lock, and a second lock from the same process always succeeds. So this
module keeps the process's only descriptor of each `.lock` in a registry: `VoterDir` opened on a
directory this process already holds joins that lock instead of opening the file again, and a
second `hold_voter_locks` on a held directory in the same process is refused like any other.

When the lock is taken by someone else, the holder's pid comes from `F_GETLK`, or failing that
from `/proc/locks`, and the error names it with its command line.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import struct
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from writers.errors import VoterLockedError, VoterUnavailableError
from writers.log.fsutil import Ownership, make_private_dir, open_private

__all__ = [
    "BROKER_LOG_DIR",
    "LOCK_FILE_NAME",
    "LockedDirKind",
    "VOTER_DIRECTORY",
    "VoterLocks",
    "acquire_voter_lock",
    "hold_voter_locks",
    "voter_lock_holder",
]

LOCK_FILE_NAME = ".lock"
"""Kafka's `LogManager.LockFileName`: the lock file in every log and metadata log directory."""

# struct flock on 64-bit Linux (glibc and musl): short l_type, short l_whence, off_t l_start,
# off_t l_len, pid_t l_pid, padded to 32 bytes.
_FLOCK = struct.Struct("hhqqi4x")


@dataclass(frozen=True, slots=True)
class LockedDirKind:
    """What kind of directory a `.lock` guards, for the messages: a broker's log dir and a
    controller's metadata dir take the same lock, but an operator must be told which one.

    Attributes:
        noun: what the directory is ("voter directory").
        users: who holds its lock when it is not us ("A running Kafka controller").
    """

    noun: str
    users: str


VOTER_DIRECTORY = LockedDirKind("voter directory",
                                "A running Kafka controller or another zk2kraft run")
BROKER_LOG_DIR = LockedDirKind("broker log dir",
                               "A running Kafka broker or another zk2kraft prepare-broker")
_PROC_LOCK_RE = re.compile(
    r"^\d+:\s+(?:->\s+)?(?P<kind>\S+)\s+\S+\s+(?P<mode>\S+)\s+(?P<pid>-?\d+)\s+"
    r"(?P<major>[0-9a-f]+):(?P<minor>[0-9a-f]+):(?P<inode>\d+)\s"
)

_registry_guard = threading.Lock()
_held: dict[tuple[int, int], _HeldLock] = {}


@dataclass(eq=False)
class _HeldLock:
    """This process's one locked descriptor of a directory's `.lock`, and who uses it."""

    directory: Path
    key: tuple[int, int]
    fd: int
    created: bool = False
    users: int = 1


@dataclass(frozen=True)
class VoterLocks:
    """The voter directories whose `.lock` this process holds (from `hold_voter_locks`).

    Attributes:
        dirs: the directories, in the order given.
    """

    dirs: tuple[Path, ...]
    _handles: tuple[_HeldLock, ...] = field(default=(), repr=False)

    def holds(self, directory: Path) -> bool:
        """True if `directory` is one of the locked voter directories."""
        try:
            key = _dir_key(Path(directory))
        except OSError:
            return False
        return any(h.key == key for h in self._handles)


def _dir_key(directory: Path) -> tuple[int, int]:
    st = os.stat(directory)
    return st.st_dev, st.st_ino


def _describe(pid: int) -> str:
    """`pid N (command line)`, the command line shortened to its start and its end."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return f"pid {pid}"
    args = [a.decode(errors="replace") for a in raw.split(b"\0") if a]
    if not args:
        return f"pid {pid}"
    text = " ".join(args)
    if len(text) > 160:
        text = f"{os.path.basename(args[0])} ... {text[-120:]}"
    return f"pid {pid} ({text})"


def _pid_from_getlk(fd: int) -> int | None:
    if sys.maxsize <= 2**32 or not sys.platform.startswith("linux"):
        return None  # the struct layout above is the 64-bit Linux one
    query = _FLOCK.pack(fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
    try:
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, query)
    except OSError:
        return None
    l_type, _, _, _, pid = _FLOCK.unpack(answer)
    return pid if l_type != fcntl.F_UNLCK and pid > 0 else None


def _pid_from_proc_locks(lock_file: Path) -> int | None:
    try:
        st = os.stat(lock_file)
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        m = _PROC_LOCK_RE.match(line)
        if m is None or m.group("kind") not in ("POSIX", "OFDLCK"):
            continue
        if (int(m.group("major"), 16), int(m.group("minor"), 16), int(m.group("inode"))) != (
            os.major(st.st_dev), os.minor(st.st_dev), st.st_ino
        ):
            continue
        pid = int(m.group("pid"))
        if pid > 0 and pid != os.getpid():
            return pid
    return None


def _locked_error(directory: Path, lock_file: Path, pid: int | None,
                  kind: LockedDirKind = VOTER_DIRECTORY) -> VoterLockedError:
    if pid is None:
        holder = "another process (its pid could not be found)"
    elif pid == os.getpid():
        holder = f"this zk2kraft process (pid {pid}): another migration in it uses the directory"
    else:
        holder = _describe(pid)
    return VoterLockedError(
        f"{kind.noun} {directory} is locked: {lock_file} is held by {holder}. {kind.users} "
        "is using it; stop it and run again",
        directory=directory,
        lock_file=lock_file,
        holder_pid=pid,
    )


def _ensure_dir(directory: Path) -> bool:
    """Create a missing voter directory: parents as usual, the directory itself 0700 and owned
    like its parent (so a controller user owning the parent can use it). True if created."""
    if directory.is_dir():
        return False
    directory.parent.mkdir(parents=True, exist_ok=True)
    return make_private_dir(directory, Ownership.of_dir(directory.parent))


def _open_and_lock(directory: Path, lock_file: Path, kind: LockedDirKind) -> int:
    """Open and lock `lock_file`; retried if it was replaced while we locked it (a run that
    created the directory removes it, `.lock` included, when it wrote nothing).

    Raises:
        VoterLockedError, VoterUnavailableError: as `_lock`.
    """
    for _ in range(5):
        try:
            fd = open_private(lock_file, os.O_RDWR, Ownership.of_dir(directory))
        except OSError as exc:
            raise VoterUnavailableError(
                f"{kind.noun} {directory}: cannot open {lock_file}: {exc.strerror or exc}"
            ) from exc
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pid = _pid_from_getlk(fd) or _pid_from_proc_locks(lock_file)
            os.close(fd)
            raise _locked_error(directory, lock_file, pid, kind) from None
        try:
            same = os.stat(lock_file).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)
    raise VoterUnavailableError(f"{kind.noun} {directory}: {lock_file} keeps being replaced")


def _lock(directory: Path, *, exclusive: bool,
          kind: LockedDirKind = VOTER_DIRECTORY) -> _HeldLock:
    """Take (or, unless `exclusive`, join) this process's lock of `directory/.lock`.

    Raises:
        VoterLockedError: another process holds it, or (exclusive) this process already does.
        VoterUnavailableError: the directory or its `.lock` cannot be created or opened.
    """
    lock_file = directory / LOCK_FILE_NAME
    try:
        created = _ensure_dir(directory)
        key = _dir_key(directory)
    except OSError as exc:
        raise VoterUnavailableError(
            f"{kind.noun} {directory}: cannot create or open it: "
            f"{exc.filename or directory}: {exc.strerror or exc}"
        ) from exc
    with _registry_guard:
        held = _held.get(key)
        if held is not None:
            if exclusive:
                raise _locked_error(directory, lock_file, os.getpid(), kind)
            held.users += 1
            return held
        fd = _open_and_lock(directory, lock_file, kind)
        held = _HeldLock(directory, key, fd, created=created)
        _held[key] = held
        return held


def _release(held: _HeldLock) -> None:
    with _registry_guard:
        held.users -= 1
        if held.users > 0:
            return
        _held.pop(held.key, None)
        if held.created:
            _remove_if_unused(held.directory)
        os.close(held.fd)  # closing the only descriptor drops the lock


def _remove_if_unused(directory: Path) -> None:
    """Remove a voter directory this run created when nothing but `.lock` went into it, so a
    run that wrote nothing (blockers, bad input, a lock held elsewhere) leaves no trace."""
    try:
        if set(os.listdir(directory)) <= {LOCK_FILE_NAME}:
            (directory / LOCK_FILE_NAME).unlink(missing_ok=True)
            directory.rmdir()
    except OSError:
        pass  # something appeared in it meanwhile: keep it


def acquire_voter_lock(directory: Path,
                       kind: LockedDirKind = VOTER_DIRECTORY) -> Callable[[], None]:
    """Hold `directory/.lock` for a `VoterDir` (or, with `kind=BROKER_LOG_DIR`, for
    `prepare-broker`), joining this process's lock if it has one.

    Returns:
        The function that releases it (once; the lock is dropped when its last user releases).

    Raises:
        VoterLockedError: another process holds it (exit 3, names the holder).
        VoterUnavailableError: it cannot be created or opened.
    """
    held = _lock(Path(directory), exclusive=False, kind=kind)
    released = False

    def release() -> None:
        nonlocal released
        if not released:
            released = True
            _release(held)

    return release


@contextlib.contextmanager
def hold_voter_locks(dirs: Sequence[Path]) -> Iterator[VoterLocks]:
    """Hold Kafka's `.lock` of every voter directory for the duration of the `with` block.

    Every lock is taken before the block starts, in the order given, without waiting: if one is
    held elsewhere, those already taken are released and nothing else is touched. A missing
    voter directory is created (mode 0700, owned like its parent) so its lock can be taken, and
    removed again on exit if nothing but `.lock` went into it.
    `VoterDir`s opened on these directories inside the block share the lock.

    Args:
        dirs: the voters' metadata log directories.

    Yields:
        The held locks (`VoterLocks.dirs`).

    Raises:
        VoterLockedError: a directory's `.lock` is held by another process (a Kafka
            controller, another zk2kraft) or by another run in this process (exit 3; the
            message names the directory and the holder's pid and command line).
        VoterUnavailableError: a directory or its `.lock` cannot be created or opened (exit 3).
    """
    taken: list[_HeldLock] = []
    paths = tuple(Path(d) for d in dirs)
    try:
        for d in paths:
            taken.append(_lock(d, exclusive=True))
        yield VoterLocks(paths, tuple(taken))
    finally:
        for h in reversed(taken):
            _release(h)


def voter_lock_holder(directory: Path,
                      kind: LockedDirKind = VOTER_DIRECTORY) -> VoterLockedError | None:
    """The error `hold_voter_locks` would raise for `directory` now, found without locking it.

    For `plan`, which must say what `migrate` would refuse but must not take a lock itself (a
    controller starting meanwhile would fail its `tryLock()` because of us): the lock is only
    queried (`F_GETLK`, or `/proc/locks` where that struct layout is unknown), and a missing or
    unreadable `.lock` counts as free (`migrate` reports what is wrong with such a directory).

    Returns:
        The `VoterLockedError` naming the holder's pid and command line, or None if free.
    """
    directory = Path(directory)
    lock_file = directory / LOCK_FILE_NAME
    try:
        key = _dir_key(directory)
    except OSError:
        return None
    with _registry_guard:
        if key in _held:  # this process holds it; opening another descriptor would drop it
            return _locked_error(directory, lock_file, os.getpid(), kind)
        try:
            fd = os.open(lock_file, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            locked, pid = _query_lock(fd, lock_file)
        finally:
            os.close(fd)
    return _locked_error(directory, lock_file, pid, kind) if locked else None


def _query_lock(fd: int, lock_file: Path) -> tuple[bool, int | None]:
    """(held by another process?, its pid) for the whole-file write lock Kafka takes."""
    if sys.maxsize > 2**32 and sys.platform.startswith("linux"):
        query = _FLOCK.pack(fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        try:
            l_type, _, _, _, pid = _FLOCK.unpack(fcntl.fcntl(fd, fcntl.F_GETLK, query))
        except OSError:
            pass
        else:
            return l_type != fcntl.F_UNLCK, (pid if pid > 0 else None)
    pid = _pid_from_proc_locks(lock_file)
    return pid is not None, pid

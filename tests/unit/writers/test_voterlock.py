"""hold_voter_locks: Kafka's `.lock` (a POSIX fcntl lock, as Kafka's FileLock takes it), held for
a whole run, refusing a held directory with the holder's pid (exit 3).

The "other holder" is a child process that locks the file the way a Kafka controller does
(`FileChannel.tryLock()` = fcntl F_SETLK, F_WRLCK over the whole file) and says so on stdout.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from migrate.cli.exit_codes import exit_code_for
from writers import (
    LOCK_FILE_NAME,
    VoterDir,
    VoterLockedError,
    VoterUnavailableError,
    hold_voter_locks,
    voter_lock_holder,
)

CLUSTER = "hoZ1PKcBRjKUt1oizWckJQ"

_HOLDER = r"""
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
print("locked", flush=True)
sys.stdin.read()  # hold until the test closes our stdin
"""

_PROBE = r"""
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    print("held")
else:
    print("free")
"""


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    """A child process holding `tmp_path/held/.lock` as a Kafka controller would."""
    d = tmp_path / "held"
    d.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(d / LOCK_FILE_NAME)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "locked\n"
    yield d, proc
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(10)


def probe(directory: Path) -> str:
    """'held' or 'free', as another process sees `directory/.lock` ('gone' if none)."""
    if not (directory / LOCK_FILE_NAME).exists():
        return "gone"
    out = subprocess.run([sys.executable, "-c", _PROBE, str(directory / LOCK_FILE_NAME)],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_locks_are_held_for_the_block_and_released_after(tmp_path: Path) -> None:
    dirs = [tmp_path / "a", tmp_path / "b"]
    dirs[0].mkdir()
    with hold_voter_locks(dirs) as locks:
        assert locks.dirs == tuple(dirs)
        assert [probe(d) for d in dirs] == ["held", "held"]
        assert locks.holds(tmp_path / "b") and not locks.holds(tmp_path)
        (dirs[1] / "meta.properties").write_text("written")
    assert [probe(d) for d in dirs] == ["free", "free"]


def test_a_directory_created_for_its_lock_is_removed_when_nothing_went_into_it(
    tmp_path: Path,
) -> None:
    with hold_voter_locks([tmp_path / "x" / "new"]):
        assert probe(tmp_path / "x" / "new") == "held"
    assert not (tmp_path / "x" / "new").exists()


def test_a_held_lock_is_refused_naming_the_dir_and_the_holders_pid(
    tmp_path: Path, holder: tuple[Path, subprocess.Popen[str]]
) -> None:
    held, proc = holder
    free = tmp_path / "free"
    with pytest.raises(VoterLockedError) as err:
        with hold_voter_locks([free, held]):
            pytest.fail("the block must not run")
    e = err.value
    assert exit_code_for(e) == 3 and isinstance(e, VoterUnavailableError)
    assert e.holder_pid == proc.pid
    assert e.directory == held and e.lock_file == held / ".lock"
    assert f"{held / '.lock'} is held by pid {proc.pid} (" in str(e)
    assert f"({os.path.basename(sys.executable)} " in str(e)  # its command line is shown
    assert not free.exists()  # the lock already taken was given back (and its new dir removed)


def test_a_second_run_in_the_same_process_is_refused(tmp_path: Path) -> None:
    d = tmp_path / "v"
    (tmp_path / "other").mkdir()
    with hold_voter_locks([d]):
        with pytest.raises(VoterLockedError, match=f"this zk2kraft process \\(pid {os.getpid()}"):
            with hold_voter_locks([tmp_path / "other", d]):
                pytest.fail("the block must not run")
        assert probe(d) == "held"
        assert probe(tmp_path / "other") == "free"


def test_a_voter_dir_opened_inside_shares_the_lock_and_closing_it_keeps_it(
    tmp_path: Path,
) -> None:
    # POSIX locks belong to the process: a second descriptor closed would drop the run's lock
    d = tmp_path / "v"
    with hold_voter_locks([d]):
        VoterDir(d, node_id=1, cluster_id=CLUSTER).close()
        assert probe(d) == "held"
    assert probe(d) == "free" and (d / "meta.properties").exists()


def test_a_voter_dir_of_a_held_directory_is_refused(
    holder: tuple[Path, subprocess.Popen[str]],
) -> None:
    held, proc = holder
    with pytest.raises(VoterLockedError, match=f"held by pid {proc.pid}"):
        VoterDir(held, node_id=1, cluster_id=CLUSTER)


def test_created_dir_and_lock_are_private_and_owned_like_the_parent(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.fail("giving a directory to another user (as a controller's own) needs root")
    parent = tmp_path / "kafka"
    parent.mkdir()
    os.chown(parent, 4321, 8765)
    with hold_voter_locks([parent / "meta"]):
        st = (parent / "meta").stat()
        assert (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid) == (0o700, 4321, 8765)
        lk = (parent / "meta" / ".lock").stat()
        assert (stat.S_IMODE(lk.st_mode), lk.st_uid, lk.st_gid) == (0o600, 4321, 8765)


def test_an_unusable_directory_is_unavailable(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(VoterUnavailableError, match="cannot create or open it") as err:
        with hold_voter_locks([tmp_path / "file" / "v"]):
            pytest.fail("the block must not run")
    assert not isinstance(err.value, VoterLockedError)


def test_the_lock_query_names_the_holder_without_taking_or_creating_the_lock(
    tmp_path: Path, holder: tuple[Path, subprocess.Popen[str]]
) -> None:
    held, proc = holder
    err = voter_lock_holder(held)
    assert err is not None and err.holder_pid == proc.pid
    assert f"{held / LOCK_FILE_NAME} is held by pid {proc.pid} (" in str(err)
    assert exit_code_for(err) == 3
    free = tmp_path / "free"
    free.mkdir()
    assert voter_lock_holder(free) is None  # no .lock: free, and none was created
    assert voter_lock_holder(tmp_path / "missing") is None
    assert sorted(os.listdir(free)) == [] and not (tmp_path / "missing").exists()


def test_querying_a_lock_this_process_holds_keeps_it_held(tmp_path: Path) -> None:
    d = tmp_path / "mine"
    with hold_voter_locks([d]):
        err = voter_lock_holder(d)
        assert err is not None and err.holder_pid == os.getpid()
        # POSIX locks drop when any descriptor of the file closes: the query must not open one
        assert probe(d) == "held"
    assert voter_lock_holder(d) is None

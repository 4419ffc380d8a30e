"""Faults around the voter directories, driven through `zk2kraft migrate` as an operator would.

Real ZooKeeper (the sample cluster fixture), the real CLI in a subprocess, real directories:
* a voter directory whose `.lock` is held, as a running Kafka controller holds it (Kafka's
  `FileChannel.tryLock()` is an fcntl F_SETLK write lock over the whole file; the holder here
  takes exactly that lock) -> exit 3 naming the directory and the holder's pid, nothing written;
* two overlapping runs on the same voters: the second is refused (exit 3, naming the first),
  the first finishes with a log that reads back whole;
* kill -9 at every staging and promotion step, then the same command again: it finishes or
  undoes the interrupted run and ends with exactly the bytes of an uninterrupted run;
* SIGTERM and SIGINT while staging: cleaned up, nothing left; what a kill -9 leaves is private;
* a voter dir that is a mount point (a small tmpfs): migrates when it fits; when it does not,
  a clear exit 3 before anything is written, and a disk that fills up mid-write leaves no
  voter promoted and no staging copy;
* a promoted log damaged before it is read back: never reported as success.

The runs stop at exact steps through the test-only `ZK2KRAFT_TEST_FAULT` hook
(`writers/_faults.py`): `kill` SIGKILLs the run there, `pause` makes it wait on stdin.
The expected bytes come from an uninterrupted run of the same command on fresh directories
(the log is deterministic, design I6), never from the writer's functions.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from samples import SampleSpec
from tests.support.immutable import Immutable

pytestmark = pytest.mark.slow

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
VOTERS = (3000, 3001, 3002)
SPEC = SampleSpec.clean(topics=6, partitions_per_topic=3)
# three batches of 2,000 records or more, so a run can be stopped between two of them
BIG = SampleSpec.clean(topics=50, partitions_per_topic=100)
STAGING = ".zk2kraft-staging"

_HOLDER = r"""
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # what Kafka's FileLock.tryLock() takes
print("locked", flush=True)
sys.stdin.read()
"""


def voter_flags(root: Path, voters: tuple[int, ...] = VOTERS) -> list[str]:
    return [f"--voter={v}={root / f'c{v}'}" for v in voters]


def migrate_cmd(connect: str, root: Path, *extra: str) -> list[str]:
    return [*ZK2KRAFT, "migrate", "--zookeeper", connect, *voter_flags(root),
            "--spark-master", "in-process", "--quiet", *extra]


def migrate(connect: str, root: Path, *extra: str,
            fault: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    if fault is not None:
        env["ZK2KRAFT_TEST_FAULT"] = fault
    return subprocess.run(migrate_cmd(connect, root, *extra), capture_output=True, text=True,
                          timeout=600, env=env, stdin=subprocess.DEVNULL)


class Paused:
    """A `migrate` run stopped at a fault point (`pause`), until `resume()`."""

    def __init__(self, connect: str, root: Path, point: str, *,
                 sigint: signal.Handlers = signal.SIG_DFL) -> None:
        env = {**os.environ, "COLUMNS": "200", "ZK2KRAFT_TEST_FAULT": f"{point}:pause"}

        def child_sigint() -> None:
            # The run's SIGINT disposition is set here, never inherited: pytest started from a
            # background job has SIGINT ignored, and so would its child (an operator's nohup)
            signal.signal(signal.SIGINT, sigint)

        self.proc = subprocess.Popen(migrate_cmd(connect, root), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=env, preexec_fn=child_sigint)
        assert self.proc.stderr is not None
        self.before: list[str] = []
        for line in self.proc.stderr:
            if line.startswith(f"zk2kraft-test-fault: {point.split('@')[0]} reached"):
                return
            self.before.append(line)
        self.proc.wait(60)
        pytest.fail(f"migrate never reached {point}: exit {self.proc.returncode}, "
                    f"stderr {''.join(self.before)}")

    def resume(self) -> tuple[int, str]:
        """Let it continue; its exit code and the rest of its stderr."""
        _, err = self.proc.communicate(input="go", timeout=600)
        return self.proc.returncode, err

    def signal(self, sig: int) -> tuple[int, str]:
        """Send a signal while it waits; its exit code and the rest of its stderr."""
        self.proc.send_signal(sig)
        assert self.proc.stdin is not None
        _, err = self.proc.communicate(timeout=600)
        return self.proc.returncode, err


def files_under(root: Path) -> dict[str, bytes]:
    """Every regular file under `root` except the lock files, by relative path."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != ".lock"}


def voters_hold_no_log(root: Path) -> bool:
    """True when no voter holds a metadata log or a staging copy (only locks, if anything)."""
    return files_under(root) == {} and not list(root.rglob(STAGING))


@pytest.fixture
def reference(tmp_path: Path) -> Callable[[str], dict[str, bytes]]:
    """`reference(connect)`: the files an uninterrupted run writes, on fresh directories."""
    def run(connect: str) -> dict[str, bytes]:
        root = tmp_path / "reference"
        result = migrate(connect, root)
        assert result.returncode == 0, result.stderr
        files = files_under(root)
        assert any(name.endswith(".log") for name in files)
        return files
    return run


@pytest.fixture
def lock_holder() -> Iterator[Callable[[Path], subprocess.Popen[str]]]:
    """Start processes that hold `DIR/.lock` like a Kafka controller; ended after the test."""
    procs: list[subprocess.Popen[str]] = []

    def hold(directory: Path) -> subprocess.Popen[str]:
        directory.mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(directory / ".lock")],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        procs.append(proc)
        assert proc.stdout is not None and proc.stdout.readline() == "locked\n"
        return proc

    yield hold
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(10)


def test_a_voter_held_like_a_running_controller_is_exit_3_naming_the_holder(
    sample_cluster: Callable[..., Any], tmp_path: Path,
    lock_holder: Callable[[Path], subprocess.Popen[str]],
) -> None:
    cluster = sample_cluster(SPEC)
    held = tmp_path / "c3001"
    holder = lock_holder(held)
    result = migrate(cluster.connect, tmp_path)
    assert result.returncode == 3, result.stderr
    assert f"voter directory {held} is locked" in result.stderr
    assert f"{held / '.lock'} is held by pid {holder.pid} (" in result.stderr
    assert files_under(tmp_path) == {}  # nothing written to any voter, nothing staged
    # once the controller is gone, the same command migrates
    assert holder.stdin is not None
    holder.stdin.close()
    holder.wait(10)
    again = migrate(cluster.connect, tmp_path)
    assert again.returncode == 0, again.stderr


def test_a_second_run_on_the_same_voters_is_refused_and_the_first_succeeds(
    sample_cluster: Callable[..., Any], tmp_path: Path,
    reference: Callable[[str], dict[str, bytes]],
) -> None:
    cluster = sample_cluster(BIG)
    expected = reference(cluster.connect)
    root = tmp_path / "voters"
    first = Paused(cluster.connect, root, "staging-batch@2")  # half written, locks held
    second = migrate(cluster.connect, root)
    assert second.returncode == 3, second.stderr
    assert f"is held by pid {first.proc.pid} (" in second.stderr
    assert "is locked" in second.stderr
    assert list(root.glob(f"c*/{STAGING}"))  # the second run did not touch the first's copy
    code, err = first.resume()
    assert code == 0, err
    assert files_under(root) == expected  # promoted whole and read back


KILL_POINTS = [
    # (fault point, what the next run must say it did)
    ("staging-batch@2", "removed the incomplete staging copy"),
    ("staged", "removed the incomplete staging copy"),
    ("promote-marked@1", "finished the interrupted promotion"),
    ("promote-marked@3", "finished the interrupted promotion"),
    ("promote-renamed@1", "finished the interrupted promotion"),
    ("promote-renamed@2", "finished the interrupted promotion"),
    ("promoted", "removed the staging copies of an interrupted run that had already promoted"),
    ("cleaned@1", "removed the staging copies of an interrupted run that had already promoted"),
    ("cleaned@3", None),  # everything was done: the next run is a no-op
]


@pytest.mark.parametrize(("point", "recovery"), KILL_POINTS, ids=[p for p, _ in KILL_POINTS])
def test_kill_9_at_each_staging_and_promotion_step_then_the_same_command_finishes(
    sample_cluster: Callable[..., Any], tmp_path: Path,
    reference: Callable[[str], dict[str, bytes]], point: str, recovery: str | None,
) -> None:
    cluster = sample_cluster(BIG)
    expected = reference(cluster.connect)
    root = tmp_path / "voters"
    killed = migrate(cluster.connect, root, fault=f"{point}:kill")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    for staging in root.glob(f"c*/{STAGING}"):  # what a kill -9 leaves is private
        for p in [staging, *staging.rglob("*")]:
            assert stat.S_IMODE(p.stat().st_mode) & 0o077 == 0, p
    again = migrate(cluster.connect, root)
    assert again.returncode == 0, again.stderr
    if recovery is not None:
        assert recovery in again.stderr
    else:
        assert "no-op" in again.stdout or again.stdout == ""
    assert files_under(root) == expected
    assert not list(root.rglob(STAGING))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_sigterm_cleans_up_like_ctrl_c(
    sample_cluster: Callable[..., Any], tmp_path: Path, sig: int,
) -> None:
    cluster = sample_cluster(BIG)
    root = tmp_path / "voters"
    (root / "c3000").mkdir(parents=True)  # an existing (empty) voter dir stays
    run = Paused(cluster.connect, root, "staging-batch@2")
    staged = sorted(root.glob(f"c*/{STAGING}"))
    assert len(staged) == 3
    for staging in staged:  # the copy holds broker passwords in clear: never world-readable
        for p in [staging, *staging.rglob("*")]:
            mode = stat.S_IMODE(p.stat().st_mode)
            assert mode == (0o700 if p.is_dir() else 0o600), (p, oct(mode))
    code, err = run.signal(sig)
    assert code == (143 if sig == signal.SIGTERM else 130), err
    assert ("terminated" if sig == signal.SIGTERM else "interrupted") in err
    assert voters_hold_no_log(root)
    assert sorted(p.name for p in root.iterdir()) == ["c3000"]  # the dirs it made are gone


def test_an_inherited_ignored_sigint_stays_ignored_and_sigterm_still_cleans_up(
    sample_cluster: Callable[..., Any], tmp_path: Path,
) -> None:
    """nohup and a script's `cmd &` start zk2kraft with SIGINT ignored: that is the parent's
    choice, so Ctrl-C aimed at the terminal's foreground job does not stop this run; SIGTERM
    does, cleaning up as always."""
    cluster = sample_cluster(BIG)
    root = tmp_path / "voters"
    run = Paused(cluster.connect, root, "staging-batch@2", sigint=signal.SIG_IGN)
    run.proc.send_signal(signal.SIGINT)
    with pytest.raises(subprocess.TimeoutExpired):
        run.proc.wait(timeout=2)  # still paused, not interrupted
    code, err = run.signal(signal.SIGTERM)
    assert code == 143, err
    assert "terminated" in err and "interrupted" not in err
    assert voters_hold_no_log(root)


def _mount_tmpfs(path: Path, size: str) -> None:
    if os.geteuid() != 0:
        pytest.fail("a mount-point voter needs root (mount -t tmpfs); run the fault tests as root")
    path.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs",
                           str(path)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        pytest.fail(f"cannot mount a tmpfs at {path}: {proc.stderr.strip()}")


@pytest.fixture
def tmpfs_voter(tmp_path: Path) -> Iterator[Callable[[Path, str], Path]]:
    """`tmpfs_voter(dir, size)`: make `dir` a mount point of a tmpfs of `size`."""
    mounted: list[Path] = []

    def mount(path: Path, size: str) -> Path:
        _mount_tmpfs(path, size)
        mounted.append(path)
        return path

    yield mount
    for path in reversed(mounted):
        subprocess.run(["umount", str(path)], check=False)


def test_a_mount_point_voter_is_migrated_in_place(
    sample_cluster: Callable[..., Any], tmp_path: Path,
    reference: Callable[[str], dict[str, bytes]],
    tmpfs_voter: Callable[[Path, str], Path],
) -> None:
    cluster = sample_cluster(BIG)
    expected = reference(cluster.connect)
    root = tmp_path / "voters"
    mount = tmpfs_voter(root / "c3001", "16m")
    result = migrate(cluster.connect, root)
    assert result.returncode == 0, result.stderr
    assert files_under(root) == expected
    assert os.path.ismount(mount)  # the voter dir itself was never replaced


def test_a_full_mount_point_voter_is_refused_before_anything_is_written(
    sample_cluster: Callable[..., Any], tmp_path: Path,
    tmpfs_voter: Callable[[Path, str], Path],
) -> None:
    cluster = sample_cluster(BIG)
    root = tmp_path / "voters"
    small = tmpfs_voter(root / "c3002", "64k")
    result = migrate(cluster.connect, root)
    assert result.returncode == 3, result.stderr
    assert f"voter 3002 ({small}): not enough free space on its filesystem" in result.stderr
    assert "nothing was written" in result.stderr
    assert voters_hold_no_log(root)


def test_a_disk_filling_up_mid_write_leaves_no_voter_promoted_and_no_staging(
    sample_cluster: Callable[..., Any], tmp_path: Path,
    tmpfs_voter: Callable[[Path, str], Path],
) -> None:
    cluster = sample_cluster(BIG)
    root = tmp_path / "voters"
    disk = tmpfs_voter(root / "c3001", "16m")
    run = Paused(cluster.connect, root, "staging-batch@1")
    # another writer fills the controller's disk after the free-space check
    with open(disk / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError as exc:
            assert exc.errno == 28  # ENOSPC
    code, err = run.resume()
    assert code == 3, err
    assert "No space left on device" in err
    assert "no voter was changed and the staging copies were removed" in err
    (disk / "filler").unlink()
    assert voters_hold_no_log(root)


def test_a_promoted_log_that_does_not_read_back_is_not_a_success(
    sample_cluster: Callable[..., Any], tmp_path: Path,
) -> None:
    cluster = sample_cluster(BIG)
    root = tmp_path / "voters"
    run = Paused(cluster.connect, root, "cleaned@3")  # promoted, about to be read back
    segment = root / "c3001" / "__cluster_metadata-0" / "00000000000000000000.log"
    data = segment.read_bytes()
    segment.write_bytes(data[: len(data) // 2])  # what an overlapping writer did to the audit
    code, err = run.resume()
    assert code != 0, err
    assert "voter 3001" in err and "does not hold the migrated log after promotion" in err


def test_staging_copies_are_inside_each_voter_dir_never_beside_it(
    sample_cluster: Callable[..., Any], tmp_path: Path,
) -> None:
    cluster = sample_cluster(BIG)
    root = tmp_path / "voters"
    run = Paused(cluster.connect, root, "staged")
    assert sorted(p.name for p in root.iterdir()) == [f"c{v}" for v in VOTERS]
    assert all((root / f"c{v}" / STAGING / "__cluster_metadata-0").is_dir() for v in VOTERS)
    code, err = run.resume()
    assert code == 0, err
    shutil.rmtree(root)


def test_a_promotion_failing_half_way_is_undone_for_every_voter(
    sample_cluster: Callable[..., Any], tmp_path: Path, immutable: Immutable,
) -> None:
    # c3001's log dir exists without a log (as a first controller start leaves it) and cannot
    # be moved (immutable); c3000 is promoted before c3001 fails, and must be put back
    cluster = sample_cluster(BIG)
    root = tmp_path / "voters"
    stuck = root / "c3001" / "__cluster_metadata-0"
    stuck.mkdir(parents=True)
    immutable.freeze([stuck])
    result = migrate(cluster.connect, root)
    immutable.release()
    assert result.returncode == 3, result.stderr
    assert "cannot promote the staged log" in result.stderr
    assert "no voter was changed and the staging copies were removed" in result.stderr
    assert voters_hold_no_log(root)
    assert stuck.is_dir() and not any(stuck.iterdir())


def test_an_interrupted_promotion_is_only_finished_with_the_same_voters(
    sample_cluster: Callable[..., Any], tmp_path: Path,
    reference: Callable[[str], dict[str, bytes]],
) -> None:
    cluster = sample_cluster(BIG)
    expected = reference(cluster.connect)
    root = tmp_path / "voters"
    killed = migrate(cluster.connect, root, fault="promote-renamed@1:kill")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    fewer = subprocess.run(
        [*ZK2KRAFT, "migrate", "--zookeeper", cluster.connect, "--spark-master", "in-process",
         "--quiet", *voter_flags(root, VOTERS[:2])],
        capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert fewer.returncode == 1, fewer.stderr
    assert "run migrate again with the same --voter flags" in fewer.stderr
    assert str(root / "c3002") in fewer.stderr
    again = migrate(cluster.connect, root)
    assert again.returncode == 0, again.stderr
    assert files_under(root) == expected


def test_sigterm_during_promotion_puts_every_voter_back(
    sample_cluster: Callable[..., Any], tmp_path: Path,
    reference: Callable[[str], dict[str, bytes]],
) -> None:
    cluster = sample_cluster(BIG)
    expected = reference(cluster.connect)
    root = tmp_path / "voters"
    # SIGTERM arrives right after the second voter's log was renamed into place
    result = migrate(cluster.connect, root, fault="promote-renamed@2:term")
    assert result.returncode == 143, result.stderr
    assert "terminated" in result.stderr
    assert voters_hold_no_log(root)
    again = migrate(cluster.connect, root)
    assert again.returncode == 0, again.stderr
    assert files_under(root) == expected


def plan_json(connect: str, root: Path) -> tuple[int, dict[str, Any], str]:
    """`zk2kraft plan --voter ... --json -` on the same voters: exit code, document, stderr."""
    import json

    proc = subprocess.run([*ZK2KRAFT, "plan", "--zookeeper", connect, *voter_flags(root),
                           "--json", "-"], capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL)
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def test_plan_over_a_copy_killed_mid_promotion_says_it_is_unfinished_and_how_to_finish(
    sample_cluster: Callable[..., Any], tmp_path: Path,
    reference: Callable[[str], dict[str, bytes]],
) -> None:
    # issue 17: killed after the first voter's log was moved into place, before the others'
    cluster = sample_cluster(SPEC)
    expected = reference(cluster.connect)
    root = tmp_path / "voters"
    killed = migrate(cluster.connect, root, fault="promote-renamed@1:kill")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    left = files_under(root)
    code, doc, err = plan_json(cluster.connect, root)
    assert code == 0, err  # nothing blocks: migrate finishes it
    unfinished = {w["path"]: w["message"] for w in doc["warnings"]
                  if w["code"] == "PROMOTION_UNFINISHED"}
    assert sorted(unfinished) == sorted(str(root / f"c{v}") for v in VOTERS)
    first, *rest = VOTERS  # the voters in --voter order: the first one was moved into place
    assert "its own log is in place" in unfinished[str(root / f"c{first}")]
    for v in rest:
        assert "not yet moved into place" in unfinished[str(root / f"c{v}")]
    for message in unfinished.values():
        assert "Running `migrate` again with the same --voter flags finishes it" in message
    assert files_under(root) == left and list(root.rglob(STAGING))  # plan changed nothing
    # and so it does; afterwards plan has nothing to say about the voters
    again = migrate(cluster.connect, root)
    assert again.returncode == 0, again.stderr
    assert files_under(root) == expected
    code, doc, err = plan_json(cluster.connect, root)
    assert code == 0 and doc["warnings"] == [], err


def test_plan_over_a_copy_killed_before_promotion_says_migrate_removes_the_staging_copy(
    sample_cluster: Callable[..., Any], tmp_path: Path,
) -> None:
    cluster = sample_cluster(SPEC)
    root = tmp_path / "voters"
    killed = migrate(cluster.connect, root, fault="staged:kill")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    code, doc, err = plan_json(cluster.connect, root)
    assert code == 0, err
    assert sorted((w["code"], w["path"]) for w in doc["warnings"]) == sorted(
        ("STAGING_LEFT_OVER", str(root / f"c{v}")) for v in VOTERS)
    assert all("no voter was changed" in w["message"] for w in doc["warnings"])

"""The test-only hooks (writers/_faults.py): off unless set, read when reached, act where named.

The read gate (ZK2KRAFT_TEST_PAUSE_READ) holds once and writes no secret; the crash hook
(ZK2KRAFT_CRASH_AT) kills the process at the n-th pass of its point; the pre-copy chunk knob is
read when used, not at import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from writers import CRASH_ENV, PRECOPY_CHUNK_ENV, ReadPause, crash_when, precopy_chunk
from writers import READ_PAUSE_ENV as ENV


def test_unset_means_no_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    assert ReadPause.from_env() is None


def test_holds_once_after_n_reads_until_go(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    monkeypatch.setenv(ENV, f"3:{gate}")
    pause = ReadPause.from_env()
    assert pause is not None
    pause.check(2, (0x1234, b"secret-password"))
    assert not (tmp_path / "gate.reached").exists()
    released = threading.Event()

    def open_gate() -> None:
        while not (tmp_path / "gate.reached").exists():
            time.sleep(0.01)
        (tmp_path / "gate.go").touch()
        released.set()

    opener = threading.Thread(target=open_gate)
    opener.start()
    pause.check(3, (0x1234, b"secret-password"))
    opener.join(10)
    assert released.is_set()
    info = json.loads((tmp_path / "gate.reached").read_text())
    assert info["reads"] == 3 and info["session_id"] == "0x1234"
    assert "secret" not in (tmp_path / "gate.reached").read_text()
    (tmp_path / "gate.reached").unlink()
    pause.check(4, (0x1234, b"secret-password"))  # once only: no second hold
    assert not (tmp_path / "gate.reached").exists()


_PASS_TWICE = (
    "import sys\n"
    "from writers import crash_point\n"
    "for n in (1, 2):\n"
    "    crash_point('elsewhere')\n"
    "    crash_point('here')\n"
    "    print('passed', n, flush=True)\n"
)


def _run_passing_twice(crash_at: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != CRASH_ENV}
    if crash_at is not None:
        env[CRASH_ENV] = crash_at
    return subprocess.run([sys.executable, "-c", _PASS_TWICE], env=env, capture_output=True,
                          text=True, timeout=60, check=False)


def test_crash_point_kills_at_the_nth_pass_of_its_point_only() -> None:
    unset = _run_passing_twice(None)
    assert unset.returncode == 0 and unset.stdout.split("\n")[:2] == ["passed 1", "passed 2"]
    second = _run_passing_twice("here:2")
    assert second.returncode == -9 and second.stdout.strip() == "passed 1"
    assert "ZK2KRAFT_CRASH_AT: killing zk2kraft at here" in second.stderr
    first = _run_passing_twice("here")
    assert first.returncode == -9 and first.stdout == ""
    other = _run_passing_twice("nowhere")
    assert other.returncode == 0


def test_crash_when_is_off_unless_its_point_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CRASH_ENV, raising=False)
    assert crash_when("fence_sent", lambda: True) is None
    monkeypatch.setenv(CRASH_ENV, "migration_sent")
    assert crash_when("fence_sent", lambda: True) is None
    monkeypatch.setenv(CRASH_ENV, "fence_sent:3")
    assert crash_when("fence_sent", lambda: True) is not None


def test_precopy_chunk_is_read_when_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PRECOPY_CHUNK_ENV, raising=False)
    assert precopy_chunk() == 20_000
    monkeypatch.setenv(PRECOPY_CHUNK_ENV, "25")
    assert precopy_chunk() == 25

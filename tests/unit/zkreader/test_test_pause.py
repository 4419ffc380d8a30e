"""The test-only read gate (ZK2KRAFT_TEST_PAUSE_READ): off unless set, holds once, no secret."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from zkreader._test_pause import ENV, ReadPause


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

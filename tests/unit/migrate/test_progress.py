"""Progress bars: only after the delay, never when disabled, never for finished work."""

from __future__ import annotations

import io

from rich.console import Console

from migrate._progress import ProgressBars, progress_wanted


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _console() -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, width=80, color_system=None, force_terminal=True), buf


def test_no_bar_before_the_delay() -> None:
    clock = Clock()
    console, buf = _console()
    with ProgressBars(enabled=True, console=console, clock=clock) as bars:
        report = bars.task("reading ZooKeeper")
        clock.now += 0.5
        report(10, 100)
        assert not bars.visible
    assert buf.getvalue() == ""


def test_bar_appears_after_the_delay() -> None:
    clock = Clock()
    console, buf = _console()
    with ProgressBars(enabled=True, console=console, clock=clock) as bars:
        report = bars.task("reading ZooKeeper")
        report(1, 100)
        clock.now += 1.5
        report(50, 100)
        assert bars.visible
    assert "reading ZooKeeper" in buf.getvalue()


def test_finished_work_draws_nothing_and_disabled_is_a_no_op() -> None:
    clock = Clock()
    console, buf = _console()
    with ProgressBars(enabled=True, console=console, clock=clock) as bars:
        clock.now += 5
        bars.task("t")(100, 100)
        assert not bars.visible
    with ProgressBars(enabled=False, console=console, clock=clock) as bars:
        clock.now += 5
        bars.task("t")(1, 100)
        assert not bars.visible
    assert buf.getvalue() == ""


def test_progress_wanted_rules() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert progress_wanted(quiet=False, stdout_is_document=False, stream=Tty())
    assert not progress_wanted(quiet=True, stdout_is_document=False, stream=Tty())
    assert not progress_wanted(quiet=False, stdout_is_document=True, stream=Tty())
    assert not progress_wanted(quiet=False, stdout_is_document=False, stream=io.StringIO())

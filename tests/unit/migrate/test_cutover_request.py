"""The manual cutover request survives SIGUSR1 arriving while the run clears it.

A signal handler runs in the main thread between two of its bytecodes. With a
`threading.Event` the handler's `set` waits on the lock the interrupted `clear` holds: the
run hangs (or, as Python re-enters the handler while it waits, dies of recursion). Checked in a
child process so a hang or a crash fails this test instead of stopping the suite.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

CHILD = textwrap.dedent("""
    import os, signal, sys, threading, time
    from migrate.online.outcome import CutoverRequest

    request = threading.Event() if sys.argv[1] == "event" else CutoverRequest()
    signal.signal(signal.SIGUSR1, lambda *_: request.set())
    stop = time.monotonic() + 1.5

    def operator() -> None:  # an impatient operator: SIGUSR1 every half millisecond
        while time.monotonic() < stop:
            os.kill(os.getpid(), signal.SIGUSR1)
            time.sleep(0.0005)

    threading.Thread(target=operator, daemon=True).start()
    while time.monotonic() < stop:
        request.clear()  # what broker_gate does when it refuses a request
    request.set()
    print("asked" if request.is_set() else "lost")
""")


def _child(kind: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", CHILD, kind], capture_output=True, text=True,
                          timeout=30, check=False)


def test_sigusr1_during_clear_neither_hangs_nor_kills_the_run() -> None:
    done = _child("request")
    assert (done.returncode, done.stdout.strip()) == (0, "asked"), done.stderr[-2000:]


def test_the_same_with_a_threading_event_breaks_which_is_why_it_is_not_one() -> None:
    try:
        done = _child("event")
    except subprocess.TimeoutExpired:
        return  # hung on its own lock
    assert done.returncode != 0, done.stdout

"""Waiting for a `zk2kraft` child with a bound, and learning where it waited when it overstays.

A run that has not ended within its bound is sent SIGQUIT: the CLI answers with every thread's
Python stack on stderr (`migrate.cli.app`, docs/design/cli.md "Signals"); it is then killed and
the test fails with the end of its output, stacks included, instead of a bare TimeoutExpired
whose output pytest shortens to a few hundred characters.
"""

from __future__ import annotations

import signal
import subprocess

__all__ = ["communicate"]

_DUMP_WAIT_S = 5.0  # long enough for the interpreter to write the stacks on a loaded host
_TAIL_CHARS = 12_000


def communicate(proc: subprocess.Popen[str], timeout: float) -> tuple[str, str]:
    """`proc.communicate(timeout=timeout)`; past it, the stacks, a kill and a failed test.

    Raises:
        AssertionError: `proc` was still running after `timeout` seconds (the message holds the
            end of its stdout and stderr, with the stacks SIGQUIT printed).
    """
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        pass
    proc.send_signal(signal.SIGQUIT)
    try:
        out, err = proc.communicate(timeout=_DUMP_WAIT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    else:  # it ended on its own meanwhile
        raise AssertionError(f"zk2kraft ended only after {timeout:g} s (exit "
                             f"{proc.returncode}):\n{out[-_TAIL_CHARS:]}{err[-_TAIL_CHARS:]}")
    raise AssertionError(f"zk2kraft did not end within {timeout:g} s; the end of its output, "
                         f"then every thread's stack:\n{(out or '')[-_TAIL_CHARS:]}\n"
                         f"{(err or '')[-_TAIL_CHARS:]}")

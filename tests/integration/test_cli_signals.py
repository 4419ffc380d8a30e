"""SIGQUIT through the `zk2kraft` command: every thread's stack on stderr, and the run goes on
(docs/design/cli.md, "Signals"). The run waits for a ZooKeeper nobody listens for, so it is
certain to be waiting when the signal lands; it then ends as that wait says it must, exit 3.
The expected header is Python's faulthandler format, written by hand."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from tests.support.ports import free_port

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]


def test_sigquit_prints_every_threads_stack_and_the_run_goes_on_to_its_own_end() -> None:
    cmd = [*ZK2KRAFT, "-v", "plan", "--zookeeper", f"127.0.0.1:{free_port()}",
           "--zk-timeout", "8"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "200"})
    assert proc.stderr is not None
    seen: list[str] = []
    deadline = time.monotonic() + 60
    # the -v line is logged once the CLI is set up (the handler armed), before the wait
    while not any("connecting to ZooKeeper" in line for line in seen):
        line = proc.stderr.readline()
        assert line and time.monotonic() < deadline, "".join(seen)
        seen.append(line)
    proc.send_signal(signal.SIGQUIT)
    out, err = proc.communicate(timeout=60)
    err = "".join(seen) + err
    assert "(most recent call first):" in err, err
    assert "Thread 0x" in err or "Current thread 0x" in err, err
    assert 'File "' in err and "line " in err, err
    # not the default SIGQUIT (a core dump, -3): the run went on and ended as its wait says
    assert proc.returncode == 3, (proc.returncode, err)
    assert "no ZooKeeper session within 8s" in err, err

"""The signals the kernel delivered reach the run through the wakeup pipe, whether or not their
Python handler ran (`migrate.cli.signal_inbox`): the handlers here do nothing, as in the loaded
test runs where the interpreter never got round to them. Checked in a child process, whose
signal handlers and wakeup fd are its own."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CHILD = textwrap.dedent("""
    import os, signal, sys, time
    from migrate.cli.exit_codes import Terminated
    from migrate.cli.signal_inbox import run_unhandled, signal_inbox
    from migrate.online.outcome import CutoverRequest

    signal.signal(signal.SIGUSR1, lambda *_: None)  # a handler that never sets the request

    class Stop(Exception):
        pass

    def on_term(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # as the CLI's: once
        raise Stop

    signal.signal(signal.SIGTERM, lambda *_: None)  # not run for real: recorded only
    request = CutoverRequest()
    with signal_inbox() as inbox:
        def take():
            delivered = inbox.take()
            if signal.SIGUSR1 in delivered:
                request.set()
            run_unhandled(delivered)
        request.poll = take
        print("before", request.is_set())
        os.kill(os.getpid(), signal.SIGUSR1)
        time.sleep(0.1)
        print("after", request.is_set())
        print("again", inbox.take())  # each delivery once
        signal.signal(signal.SIGTERM, on_term)
        try:
            if sys.argv[1] == "python":
                os.kill(os.getpid(), signal.SIGTERM)  # Python runs on_term here, or just after
                time.sleep(0.1)
            run_unhandled({signal.SIGTERM})
            print("not stopped")
        except Stop:
            print("stopped once")
        try:  # on_term ran and its exception was lost, yet the run goes on: ended all the same
            run_unhandled({signal.SIGTERM})
            print("not stopped")
        except Terminated:
            print("terminated")
""")


def _child(mode: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True,
                          timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_sigusr1_sets_the_request_through_the_pipe_though_its_handler_does_nothing() -> None:
    lines = _child("poll")
    assert lines[:3] == ["before False", "after True", "again set()"]


def test_a_delivered_sigterm_always_ends_the_run() -> None:
    assert _child("poll")[3:] == ["stopped once", "terminated"]  # the poll ran it
    assert _child("python")[3:] == ["stopped once", "terminated"]  # Python ran it first

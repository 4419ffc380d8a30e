"""`PollHandler.select`: the same answers as kazoo's `selector_select`, on real sockets."""

from __future__ import annotations

import socket

import pytest
from kazoo.handlers.utils import selector_select

from zkreader._session import PollHandler


@pytest.fixture()
def pair() -> tuple[socket.socket, socket.socket]:
    a, b = socket.socketpair()
    yield a, b
    a.close()
    b.close()


def both(rlist: list[object], wlist: list[object], timeout: float) -> object:
    ours = PollHandler().select(rlist, wlist, [], timeout)
    assert ours == tuple(selector_select(rlist, wlist, [], timeout))
    return ours


def test_nothing_ready_times_out_empty(pair: tuple[socket.socket, socket.socket]) -> None:
    a, _ = pair
    assert both([a], [], 0.01) == ([], [], [])


def test_readable_and_writable(pair: tuple[socket.socket, socket.socket]) -> None:
    a, b = pair
    b.send(b"x")
    assert both([a], [], 1.0) == ([a], [], [])
    assert both([], [a], 1.0) == ([], [a], [])
    # readable wins when a socket is asked for both, as in kazoo's selector_select
    readable, writable, _ = both([a], [a], 1.0)  # type: ignore[misc]
    assert set(readable) == {a} and writable == []


def test_a_hang_up_counts_as_readable(pair: tuple[socket.socket, socket.socket]) -> None:
    a, b = pair
    b.close()
    assert both([a], [], 1.0) == ([a], [], [])
    assert a.recv(1) == b""  # what kazoo then turns into ConnectionDropped


def test_a_closed_socket_or_a_negative_timeout_fails_as_in_kazoo(
        pair: tuple[socket.socket, socket.socket]) -> None:
    _, b = pair
    with pytest.raises(ValueError):
        PollHandler().select([b], [], [], -1)
    b.close()
    with pytest.raises(TypeError, match="Invalid file descriptor"):
        selector_select([b], [], [], 0.01)
    with pytest.raises(TypeError, match="Invalid file descriptor"):
        PollHandler().select([b], [], [], 0.01)

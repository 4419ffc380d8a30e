"""The stand-in's SASL/PLAIN server side over a real socket (no Kafka needed): a wrong password
gets SASL_AUTHENTICATION_FAILED (58) and the connection is closed, as Kafka's authenticator does;
a request other than ApiVersions before logging in is refused by closing the connection; the
right password lets a request through. (Real controllers logging in: tests/oracle.)"""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.ports import free_port
from writers import StandInLeader, decode_response, encode_request

CLUSTER = "c3RhbmRpbi1zYXNsLXRlc3Q"[:22]


@pytest.fixture
def standin(tmp_path: Path) -> Iterator[StandInLeader]:
    port = free_port()
    leader = StandInLeader(3000, listen=("127.0.0.1", port),
                           voters={3000: ("127.0.0.1", port), 3001: ("127.0.0.1", 1)},
                           log_dir=tmp_path / "meta3000", cluster_id=CLUSTER,
                           sasl_users={"controller": "right"})
    yield leader
    leader.close()


def _call(sock: socket.socket, key: int, version: int, corr: int, body: dict) -> dict | None:
    sock.sendall(encode_request(key, version, corr, "test", body))
    head = sock.recv(4)
    if len(head) < 4:
        return None  # closed
    size = struct.unpack(">i", head)[0]
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return decode_response(key, version, data)[1]


def _closed(sock: socket.socket) -> bool:
    sock.settimeout(5)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def test_wrong_password_is_refused_and_the_connection_closed(standin: StandInLeader) -> None:
    with socket.create_connection(standin.listen, timeout=5) as sock:
        shake = _call(sock, 17, 1, 1, {"mechanism": "PLAIN"})
        assert shake == {"errorCode": 0, "mechanisms": ["PLAIN"]}
        auth = _call(sock, 36, 2, 2, {"authBytes": b"\0controller\0wrong"})
        assert auth is not None and auth["errorCode"] == 58
        assert _closed(sock)


def test_unknown_mechanism_is_refused(standin: StandInLeader) -> None:
    with socket.create_connection(standin.listen, timeout=5) as sock:
        shake = _call(sock, 17, 1, 1, {"mechanism": "SCRAM-SHA-512"})
        assert shake == {"errorCode": 33, "mechanisms": ["PLAIN"]}  # UNSUPPORTED_SASL_MECHANISM


def test_requests_before_login_are_refused(standin: StandInLeader) -> None:
    with socket.create_connection(standin.listen, timeout=5) as sock:
        versions = _call(sock, 18, 3, 1, {})
        assert versions is not None and {17, 36} <= {a["apiKey"] for a in versions["apiKeys"]}
        assert _call(sock, 70, 0, 2, {"controllerId": 3001}) is None


def test_right_password_lets_requests_through(standin: StandInLeader) -> None:
    with socket.create_connection(standin.listen, timeout=5) as sock:
        _call(sock, 17, 1, 1, {"mechanism": "PLAIN"})
        auth = _call(sock, 36, 2, 2, {"authBytes": b"\0controller\0right"})
        assert auth is not None and auth["errorCode"] == 0
        answer = _call(sock, 70, 0, 3, {"controllerId": 3001})
        # not leading (no election here): NOT_CONTROLLER, so a controller looks elsewhere
        assert answer is not None and answer["errorCode"] == 41

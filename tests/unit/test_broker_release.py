"""`plan --bootstrap-server`'s reading of ApiVersions answers (`migrate.preflight.broker_release`).

The expected lines are facts from Kafka's KIPs and release notes, not read back from the table:
Fetch v13 (topic ids in fetch, KIP-516) first shipped in 3.1; Produce v10 and Fetch v16 (leader
discovery, KIP-951) in 3.7; AddPartitionsToTxn v4 (KIP-890's broker-to-broker verification) is
advertised from 3.6. The real brokers' answers are checked in the version matrix
(tests/oracle/test_version_matrix.py, the source's own brokers) and the 3.9.1 tree test.
"""

from __future__ import annotations

import socket
import threading
from typing import Any

import pytest

from migrate.errors import BadFlagError
from migrate.online.canary import check_bootstrap_servers
from migrate.preflight.broker_release import (
    api_versions,
    release_bounds,
)
from migrate.preflight.kafka_api_versions import ZK_BROKER_MAX_VERSIONS
from writers.codec.protocol import encode_response


def _line(text: str) -> dict[int, int]:
    return {int(k): int(v) for k, v in (p.split(":") for p in ZK_BROKER_MAX_VERSIONS[text].split())}


def test_every_line_from_2_8_to_3_9_is_in_the_table_and_differs_from_the_one_before() -> None:
    lines = list(ZK_BROKER_MAX_VERSIONS)
    assert lines == ["2.8", "3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9"]
    for older, newer in zip(lines, lines[1:], strict=False):
        assert _line(older) != _line(newer), (older, newer)


def test_known_api_versions_of_known_lines() -> None:
    assert _line("3.0")[1] == 12 and _line("3.1")[1] == 13  # Fetch v13: KIP-516, 3.1
    assert (_line("3.6")[0], _line("3.7")[0], _line("3.7")[1]) == (9, 10, 16)  # KIP-951, 3.7
    assert (_line("3.5")[24], _line("3.6")[24]) == (3, 4)  # AddPartitionsToTxn v4, 3.6


@pytest.mark.parametrize("line", list(ZK_BROKER_MAX_VERSIONS))
def test_a_broker_serving_exactly_a_line_is_named_that_line(line: str) -> None:
    lines = list(ZK_BROKER_MAX_VERSIONS)
    following = lines[lines.index(line) + 1] if line != lines[-1] else None
    at_least, before = release_bounds(_line(line))
    text = f"{at_least[0]}.{at_least[1]}" if at_least else None
    after = f"{before[0]}.{before[1]}" if before else None
    assert (text, after) == (line, following)


def test_a_3_6_broker_with_unstable_versions_enabled_still_reads_3_6() -> None:
    # unstable.api.versions.enable raises some maxima past the stable ones; a higher version of
    # one API is not a newer release unless every API of that release is served
    served = {**_line("3.6"), 1: 16}
    assert release_bounds(served) == ((3, 6), (3, 7))


def test_a_broker_older_than_2_8_is_below_the_table() -> None:
    served = {**_line("2.8"), 3: 10}  # one API below 2.8's maximum (Metadata v11 in 2.8)
    assert release_bounds(served) == (None, (2, 8))


def test_an_empty_answer_is_before_2_8() -> None:
    assert release_bounds({}) == (None, (2, 8))


@pytest.mark.parametrize(("value", "expected"), [
    ("localhost:9092", [("localhost", 9092)]),
    ("a:1, b:65535", [("a", 1), ("b", 65535)]),
    ("[::1]:9092", [("::1", 9092)]),
    ("SASL_PLAINTEXT://h:9093", [("h", 9093)]),
])
def test_bootstrap_addresses(value: str, expected: list[tuple[str, int]]) -> None:
    assert check_bootstrap_servers(value) == expected  # plan's and migrate's one check


@pytest.mark.parametrize("value", ["localhost", "host:", ":9092", "h:0", "h:70000", "h:x"])
def test_a_bad_bootstrap_address_is_refused_naming_it(value: str) -> None:
    with pytest.raises(BadFlagError, match=f"--bootstrap-server '{value}'"):
        check_bootstrap_servers(value)


def _serve_once(answer: bytes | None) -> tuple[int, threading.Thread]:
    """A one-connection server on loopback: reads a request, then sends `answer` (None: nothing)."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def run() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(4096)
            if answer is not None:
                conn.sendall(answer)
            else:
                conn.recv(4096)  # hold the connection open until the client gives up
        listener.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return port, thread


def test_api_versions_reads_a_kafka_shaped_answer() -> None:
    body = {"errorCode": 0, "apiKeys": [{"apiKey": 0, "minVersion": 0, "maxVersion": 9},
                                        {"apiKey": 18, "minVersion": 0, "maxVersion": 3}]}
    port, thread = _serve_once(encode_response(18, 0, 1, body))
    assert api_versions("127.0.0.1", port, 5.0) == {0: 9, 18: 3}
    thread.join(5)


def test_api_versions_gives_up_at_its_timeout() -> None:
    port, thread = _serve_once(None)
    with pytest.raises(TimeoutError):
        api_versions("127.0.0.1", port, 0.3)
    thread.join(5)


class _TwoBrokers:
    brokers = {1: None, 2: None}  # what `_probed_bounds` reads of a snapshot: the registered ids


def test_the_cluster_is_bounded_by_its_oldest_and_newest_broker_only_when_all_answered() -> None:
    from migrate.preflight.broker_release import BrokerRelease
    from migrate.preflight.source_version import _probed_bounds

    snapshot: Any = _TwoBrokers()
    mid_upgrade = [BrokerRelease(1, "a:1", (3, 6), (3, 7)), BrokerRelease(2, "b:1", (3, 8), (3, 9))]
    assert _probed_bounds(snapshot, mid_upgrade, []) == ((3, 6), (3, 9))
    newest = [BrokerRelease(1, "a:1", (3, 6), (3, 7)), BrokerRelease(2, "b:1", (3, 9), None)]
    assert _probed_bounds(snapshot, newest, []) == ((3, 6), None)
    evidence: list[str] = []
    silent = [BrokerRelease(1, "a:1", (3, 6), (3, 7)), BrokerRelease(2, "b:1", error="refused")]
    assert _probed_bounds(snapshot, silent, evidence) is None
    assert "not every registered broker answered" in evidence[-1]

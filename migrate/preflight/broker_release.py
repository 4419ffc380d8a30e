"""Which Kafka line each broker runs, from its ApiVersions answer: `plan --bootstrap-server`.

ZooKeeper records no software version (`source_version` bounds it from znode formats). A broker
does tell which versions of each API it serves, and every Kafka line from 2.8 to 3.9 raised at
least one of them (`kafka_api_versions`, read from each line's kafka-clients jar). A broker's
line is then the newest whose every API it serves at that line's version or higher; it is
older than the next line that needs an API version it lacks.

Which brokers are asked: a `--bootstrap-server` address that a registered broker advertises
names the listener, and every registered broker is asked on that listener (a rolling upgrade
half done shows as brokers of two lines). An address no broker advertises (a load balancer, an
alias) is asked itself. ApiVersions is answered before any authentication (KIP-35, and on SASL
listeners before the handshake), so the probe sends no credential; TLS listeners are not asked
(a plain-text probe cannot speak to them), and say so. Each answer is awaited at most
`timeout_s`, brokers in parallel, so the probe's bound is that timeout (about one per 16
brokers).
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from migrate.preflight.kafka_api_versions import ZK_BROKER_MAX_VERSIONS
from writers.codec import decode_response, encode_request
from zkreader import ClusterSnapshot

__all__ = ["BrokerRelease", "Release", "probe_brokers", "release_bounds", "release_range",
           "release_text"]

Release = tuple[int, int]

_API_VERSIONS = 18
_PROBES_AT_ONCE = 16
_TLS = frozenset({"SSL", "SASL_SSL"})
_LARGEST_ANSWER = 1 << 20  # an ApiVersions answer is a few hundred bytes


def _table() -> list[tuple[Release, dict[int, int]]]:
    rows = []
    for line, pairs in ZK_BROKER_MAX_VERSIONS.items():
        major, minor = line.split(".")
        maxes = {int(k): int(v) for k, v in (p.split(":") for p in pairs.split())}
        rows.append(((int(major), int(minor)), maxes))
    return sorted(rows)


_LINES = _table()


def release_bounds(advertised: Mapping[int, int]) -> tuple[Release | None, Release | None]:
    """(at least, before) for a broker serving `advertised` (api key -> its max version).

    `at least` is None below 2.8; `before` is None from 3.9 on (the newest ZooKeeper line).
    """
    at_least: Release | None = None
    for line, maxes in _LINES:
        if all(advertised.get(key, -1) >= top for key, top in maxes.items()):
            at_least = line
    for line, maxes in _LINES:
        if (at_least is None or line > at_least) and any(
                advertised.get(key, -1) < top for key, top in maxes.items()):
            return at_least, line
    return at_least, None


@dataclass(frozen=True, slots=True)
class BrokerRelease:
    """One broker's answer (or why there is none).

    Attributes:
        broker_id: the registered broker at `address`, None for an address no broker advertises.
        address: "host:port" asked.
        at_least / before: its line's bounds (see `release_bounds`), None when unknown.
        error: why it was not asked or did not answer, None when it answered.
    """

    broker_id: int | None
    address: str
    at_least: Release | None = None
    before: Release | None = None
    error: str | None = None

    def describe(self) -> str:
        who = (f"broker {self.broker_id} ({self.address})" if self.broker_id is not None
               else self.address)
        if self.error is not None:
            return f"{who}: {self.error}"
        return f"{who} ApiVersions: Kafka {_line_range(self.at_least, self.before)}"

    def to_json(self) -> dict[str, object]:
        def text(r: Release | None) -> str | None:
            return None if r is None else release_text(r)

        return {"broker": self.broker_id, "address": self.address,
                "kafka_at_least": text(self.at_least), "kafka_before": text(self.before),
                "error": self.error}


def release_text(release: Release) -> str:
    """(3, 6) -> "3.6"."""
    return f"{release[0]}.{release[1]}"


def release_range(low: Release | None, below: Release | None) -> str:
    """Bounds as `plan` prints them: "3.4 or later, before 3.6", "before 2.7", "unknown"."""
    if low is None and below is None:
        return "unknown"
    if below is None:
        assert low is not None
        return f"{release_text(low)} or later"
    if low is None:
        return f"before {release_text(below)}"
    return f"{release_text(low)} or later, before {release_text(below)}"


def _line_range(low: Release | None, below: Release | None) -> str:
    """One broker's line: exact where the bounds are one line apart, else `release_range`."""
    if low is None and below is not None:
        return "older than 2.8"
    if low is not None and below is not None and below == _next_line(low):
        return release_text(low)
    return release_range(low, below)


def _next_line(line: Release) -> Release | None:
    later = [known for known, _ in _LINES if known > line]
    return later[0] if later else None


_Target = tuple[int | None, str, int, str | None]  # broker id, host, port, why not asked


def _targets(snapshot: ClusterSnapshot, bootstrap: Sequence[tuple[str, int]]) -> list[_Target]:
    """Each address to ask, with the broker that advertises it."""
    asked = set(bootstrap)
    listeners = {ep.listener for b in snapshot.brokers.values() for ep in b.endpoints
                 if (ep.host, ep.port) in asked}
    if not listeners:
        return [(None, host, port, None) for host, port in bootstrap]
    found: list[_Target] = []
    for broker_id in sorted(snapshot.brokers):
        endpoints = [ep for ep in snapshot.brokers[broker_id].endpoints
                     if ep.listener in listeners]
        if not endpoints:
            found.append((broker_id, "-", 0, f"advertises no {'/'.join(sorted(listeners))} "
                                                "listener"))
            continue
        ep = endpoints[0]
        why = (f"listener {ep.listener} is {ep.security_protocol}: not asked (the probe speaks "
               "plain text)" if ep.security_protocol in _TLS else None)
        found.append((broker_id, ep.host, ep.port, why))
    return found


def _read(sock: socket.socket, size: int, deadline: float) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        sock.settimeout(left)
        chunk = sock.recv(size - len(chunks))
        if not chunk:
            raise ConnectionError("the connection closed before the answer")
        chunks += chunk
    return bytes(chunks)


def api_versions(host: str, port: int, timeout_s: float) -> dict[int, int]:
    """Ask one broker for ApiVersions v0 (every broker since 0.10 answers it): api key -> max.

    Raises:
        OSError: connection refused, reset, or no whole answer within `timeout_s`.
        ValueError: an error code or an answer that does not decode.
    """
    deadline = time.monotonic() + timeout_s
    with socket.create_connection((host, port), timeout=timeout_s) as sock:
        sock.sendall(encode_request(_API_VERSIONS, 0, 1, "zk2kraft-plan", {}))
        (size,) = struct.unpack(">i", _read(sock, 4, deadline))
        if not 0 < size <= _LARGEST_ANSWER:
            raise ValueError(f"an answer of {size} bytes is not an ApiVersions answer")
        payload = _read(sock, size, deadline)
    try:
        _, body = decode_response(_API_VERSIONS, 0, payload)
    except Exception as exc:  # the codec's decode errors: not Kafka speaking
        raise ValueError(f"the answer does not decode as ApiVersions ({exc})") from None
    if body["errorCode"] != 0:
        raise ValueError(f"ApiVersions answered error code {body['errorCode']}")
    return {k["apiKey"]: k["maxVersion"] for k in body["apiKeys"]}


def _ask(target: _Target, timeout_s: float) -> BrokerRelease:
    broker_id, host, port, why = target
    address = f"{host}:{port}" if port else host
    if why is not None:
        return BrokerRelease(broker_id, address, error=why)
    try:
        advertised = api_versions(host, port, timeout_s)
    except TimeoutError:
        return BrokerRelease(broker_id, address,
                             error=f"no ApiVersions answer within {timeout_s:g} s")
    except (OSError, ValueError) as exc:
        return BrokerRelease(broker_id, address, error=f"not answered ({exc})")
    at_least, before = release_bounds(advertised)
    return BrokerRelease(broker_id, address, at_least, before)


def probe_brokers(snapshot: ClusterSnapshot, bootstrap: Sequence[tuple[str, int]],
                  timeout_s: float) -> list[BrokerRelease]:
    """Ask each broker the module docstring names, in parallel; one entry per address."""
    targets = _targets(snapshot, bootstrap)
    with ThreadPoolExecutor(max_workers=min(_PROBES_AT_ONCE, max(1, len(targets)))) as pool:
        return list(pool.map(lambda t: _ask(t, timeout_s), targets))

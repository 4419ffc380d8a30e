"""The stand-in's wire: what it advertises, SASL/PLAIN on its listener, and its outbound RPCs.

`Peers` opens connections to the other voters (TLS and SASL/PLAIN as their controller listener
wants) and exchanges one request at a time on them; the Raft decisions are
`writers.raft.leader`'s, the serving loop is `writers.raft.server`'s.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from writers.codec.protocol import decode_response, encode_request
from writers.errors import VoterUnavailableError
from writers.raft.errors import NONE, SASL_AUTHENTICATION_FAILED, UNSUPPORTED_SASL_MECHANISM

__all__ = ["ADVERTISED", "Conn", "Peers", "api_keys", "quorum_leader_and_observers", "sasl_step"]

log = logging.getLogger(__name__)

# What the stand-in advertises in ApiVersions; a controller then sends exactly these versions.
ADVERTISED: Mapping[int, tuple[int, int]] = {
    # Fetch: 3.9 sends v17, 3.7/3.8 v16, 3.5/3.6 v15 (the first with ReplicaState, which the
    # stand-in reads): brokers of those lines in migration mode fetch as observers (issue 29)
    1: (15, 17),
    18: (0, 4),    # ApiVersions
    52: (0, 0),    # Vote
    53: (0, 0),    # BeginQuorumEpoch
    54: (0, 0),    # EndQuorumEpoch
    62: (0, 4),    # BrokerRegistration (3.9.1 brokers send v4)
    63: (0, 1),    # BrokerHeartbeat
    70: (0, 0),    # ControllerRegistration
}


@dataclass
class Conn:
    """One inbound connection's SASL state."""

    authenticated: bool
    closing: bool = False



def api_keys(sasl: bool) -> list[dict[str, int]]:
    """ApiVersions' list: what the stand-in answers, SASL's two RPCs with a SASL listener."""
    advertised = dict(ADVERTISED)
    if sasl:
        advertised.update({17: (1, 1), 36: (0, 2)})
    return [{"apiKey": k, "minVersion": lo, "maxVersion": hi}
            for k, (lo, hi) in sorted(advertised.items())]


def sasl_step(api_key: int, body: dict[str, Any], conn: Conn,
              sasl_users: Mapping[str, str] | None, node_id: int) -> dict[str, Any]:
    """SaslHandshake v1 and SaslAuthenticate for PLAIN (`authzid NUL user NUL password`)."""
    if api_key == 17:
        ok = body["mechanism"] == "PLAIN" and sasl_users is not None
        return {"errorCode": NONE if ok else UNSUPPORTED_SASL_MECHANISM,
                "mechanisms": ["PLAIN"] if sasl_users is not None else []}
    parts = bytes(body["authBytes"]).split(b"\0")
    users = sasl_users or {}
    if len(parts) == 3 and users.get(parts[1].decode("utf-8", "replace")) == parts[2].decode(
            "utf-8", "replace"):
        conn.authenticated = True
        return {"errorCode": NONE, "errorMessage": None, "authBytes": b""}
    conn.closing = True  # Kafka closes the connection after a failed authentication
    log.warning("stand-in %d: SASL/PLAIN authentication failed", node_id)
    return {"errorCode": SASL_AUTHENTICATION_FAILED,
            "errorMessage": "Authentication failed: Invalid username or password",
            "authBytes": b""}


def quorum_leader_and_observers(node: int, answer: Mapping[str, Any]
                                ) -> tuple[int, dict[int, int]]:
    """A DescribeQuorum v1 answer from voter `node`: the leader it names and each observer's
    LastFetchTimestamp (the leader's clock, ms).

    Raises:
        VoterUnavailableError: any error. A voter that does not lead answers
            NOT_LEADER_OR_FOLLOWER with only partitionIndex, errorCode and errorMessage set
            (Kafka's `DescribeQuorumResponse.singletonErrorResponse`), so its leaderId is the
            schema's default 0, not a leader: read as one, it sent the next DescribeQuorum to
            "voter 0" (a CI run's `KeyError: 0` after the handoff).
    """
    part = answer["topics"][0]["partitions"][0] if answer.get("topics") else {}
    error = part.get("errorCode", answer.get("errorCode", NONE))
    if answer.get("errorCode", NONE) != NONE or error != NONE:
        raise VoterUnavailableError(f"voter {node} answered DescribeQuorum with error {error}")
    return int(part["leaderId"]), {int(o["replicaId"]): int(o["lastFetchTimestamp"])
                                   for o in part.get("observers", [])}


class Peers:
    """Outbound connections from the stand-in to the other voters.

    Args:
        node_id: the stand-in's id (its client id names it).
        voters: every voter's id -> (host, port).
        tls_client: the TLS context to connect with, or None.
        sasl_client: (user, password) for SASL/PLAIN, or None.
    """

    def __init__(self, node_id: int, voters: Mapping[int, tuple[str, int]], *,
                 tls_client: ssl.SSLContext | None, sasl_client: tuple[str, str] | None) -> None:
        self.node_id = node_id
        self.voters = dict(voters)
        self.tls_client = tls_client
        self.sasl_client = sasl_client

    async def rpc(
        self, node: int, api_key: int, version: int, body: Mapping[str, Any], timeout: float,
        on_sent: Callable[[], None] | None = None,
    ) -> dict[str, Any]:
        """One request on a fresh connection to a voter (rare: votes, epoch changes);
        `on_sent` runs as the request itself (not a SASL step) is handed to the socket."""

        async def go() -> dict[str, Any]:
            reader, writer = await self.open(node)
            try:
                return await self.exchange(reader, writer, api_key, version, 3, body, on_sent)
            finally:
                writer.close()

        return await asyncio.wait_for(go(), timeout)

    async def open(self, node: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A connection to a voter, logged in when the listener wants SASL/PLAIN."""
        host, port = self.voters[node]
        reader, writer = await asyncio.open_connection(
            host, port, ssl=self.tls_client,
            server_hostname=host if self.tls_client is not None else None)
        try:
            if self.sasl_client is not None:  # SASL/PLAIN, as Kafka's client does it
                user, password = self.sasl_client
                shake = await self.exchange(reader, writer, 17, 1, 1, {"mechanism": "PLAIN"})
                auth = await self.exchange(reader, writer, 36, 2, 2, {
                    "authBytes": b"\0" + user.encode() + b"\0" + password.encode()})
                if shake["errorCode"] != NONE or auth["errorCode"] != NONE:
                    raise VoterUnavailableError(
                        f"voter {node} refused the stand-in's SASL/PLAIN login as {user!r}: "
                        f"{auth.get('errorMessage') or shake['errorCode']}")
        except BaseException:
            writer.close()
            raise
        return reader, writer

    async def exchange(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, key: int, ver: int,
        corr: int, data: Mapping[str, Any], sent: Callable[[], None] | None = None,
    ) -> dict[str, Any]:
        """One request and its response; `sent` runs as the request is handed to the socket
        (just before the write, and before any await: a busy loop must not make the stamp
        late)."""
        self.send(writer, key, ver, corr, data, sent)
        return await self.receive(reader, writer, key, ver)

    def send(self, writer: asyncio.StreamWriter, key: int, ver: int, corr: int,
              data: Mapping[str, Any], sent: Callable[[], None] | None = None) -> None:
        frame = encode_request(key, ver, corr, f"zk2kraft-standin-{self.node_id}", data)
        if sent is not None:
            # stamped just before the write, never after: the write's send() lets go of the GIL
            # and a loaded host may not give it back for tens of ms, while the peer has the
            # request and acts on it (a stamp after the write came out 21.7 ms later than the
            # controller's reaction to it, in a CI run)
            sent()
        writer.write(frame)

    async def receive(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                       key: int, ver: int) -> dict[str, Any]:
        await writer.drain()
        size = struct.unpack(">i", await reader.readexactly(4))[0]
        return decode_response(key, ver, await reader.readexactly(size))[1]

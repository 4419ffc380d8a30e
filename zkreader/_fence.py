"""The fence: zk2kraft takes the controller role away from ZooKeeper, Kafka's own way.

Kafka's KRaft controller claims ZooKeeper with one multi-op (`KafkaZkClient.
tryRegisterKRaftControllerAsActiveController`): set
`/controller_epoch` to epoch + 1 *expecting its version*, delete the ZooKeeper controller's
ephemeral `/controller`, create a persistent `/controller` carrying `kraftControllerEpoch`. The
old controller's writes all check `/controller_epoch`'s version, so from that commit on they fail,
and ZooKeeper brokers see a `/controller` and never run for election. We add the write of
`/migration` to the same multi-op, so one commit leaves everything a 3.9 controller expects.
That write checks `/migration` at the version the run read and judged before copying anything
(or creates it if it was absent then): a `/migration` rewritten since (by a controller in
migration mode, another tool) fails the whole multi-op, and is never overwritten unchecked.

Why no blind retry: a multi-op whose reply was lost to a connection loss may or may not have
applied. Re-sending it after it applied would fail (the version moved) and look like another
controller won; re-sending a *fresh* read after someone else fenced would fence twice. So after
a connection loss we read back: applied (our exact `/controller` claim is there and the epoch is
ours), not applied (the epoch's version is unchanged: safe to send again), or moved (someone
else: stop).

Every write after the fence (`write_migration_state`, `release_claim`) is a multi-op whose first
op checks `/controller_epoch` at the version the fence left (design I4).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kazoo.exceptions import (
    ConnectionLoss,
    OperationTimeoutError,
)

from zkreader import _paths
from zkreader._session import ZkSession, map_kazoo_error
from zkreader.errors import ZkReaderError, ZkUnreachableError

__all__ = [
    "MIGRATION_ABSENT",
    "ControllerMovedError",
    "MigrationMovedError",
    "FenceToken",
    "MigrationState",
    "claim_json",
    "claim_kraft_epoch",
    "fence_zk_controller",
    "migration_json",
    "FenceNotAppliedError",
    "FenceState",
    "read_fence_state",
    "release_claim",
    "write_migration_state",
]

log = logging.getLogger(__name__)



class ControllerMovedError(ZkReaderError):
    """Another controller changed `/controller_epoch` (or claimed `/controller`) first.

    Exit 3, as its base `ZkReaderError` (migrate/cli/exit_codes.py)."""


class MigrationMovedError(ControllerMovedError):
    """`/migration` is not at the version the run read and judged (the fence) or the fence left
    (`write_migration_state`): someone else wrote it.

    Raised before or instead of applying anything; exit 3, as its base."""


MIGRATION_ABSENT = -1
"""`fence_zk_controller`'s `migration_version` when `/migration` did not exist (ZooKeeper's own
versions start at 0)."""


@dataclass(frozen=True, slots=True)
class MigrationState:
    """The content of `/migration` (version 0), as Kafka's `ZkMigrationLeadershipState` writes."""

    kraft_controller_id: int
    kraft_controller_epoch: int
    kraft_metadata_offset: int = -1
    kraft_metadata_epoch: int = -1


@dataclass(frozen=True, slots=True)
class FenceToken:
    """What the fence left in ZooKeeper; every later write checks `epoch_zk_version` (I4).

    Attributes:
        controller_epoch: `/controller_epoch` after the fence (the old value + 1).
        epoch_zk_version: `/controller_epoch`'s znode version after the fence.
        migration_zk_version: `/migration`'s znode version after the fence.
        claim: the exact `/controller` bytes we created.
        already_applied: the multi-op's reply was lost and the read-back found it applied.
    """

    controller_epoch: int
    epoch_zk_version: int
    migration_zk_version: int
    claim: bytes
    already_applied: bool = False

    def to_json(self) -> dict[str, Any]:
        """The journal's form."""
        return {"controller_epoch": self.controller_epoch,
                "epoch_zk_version": self.epoch_zk_version,
                "migration_zk_version": self.migration_zk_version,
                "claim": self.claim.decode()}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> FenceToken:
        """Inverse of `to_json`."""
        return cls(int(doc["controller_epoch"]), int(doc["epoch_zk_version"]),
                   int(doc["migration_zk_version"]), str(doc["claim"]).encode())


def claim_json(broker_id: int, kraft_epoch: int, timestamp_ms: int) -> bytes:
    """`/controller` as a KRaft controller writes it (`ControllerZNode.encode`, version 2)."""
    return json.dumps({"version": 2, "brokerid": broker_id, "timestamp": str(timestamp_ms),
                       "kraftControllerEpoch": kraft_epoch}, separators=(",", ":")).encode()


def migration_json(state: MigrationState) -> bytes:
    """`/migration` as Kafka's `MigrationZNode.encode` writes it (version 0)."""
    return json.dumps({"version": 0,
                       "kraft_controller_id": state.kraft_controller_id,
                       "kraft_controller_epoch": state.kraft_controller_epoch,
                       "kraft_metadata_offset": state.kraft_metadata_offset,
                       "kraft_metadata_epoch": state.kraft_metadata_epoch},
                      separators=(",", ":")).encode()


@dataclass(frozen=True, slots=True)
class _Node:
    data: bytes
    version: int
    ephemeral_owner: int


def _get(session: ZkSession, path: str, deadline: float) -> _Node | None:
    """One znode, read before `deadline` (`time.monotonic()`; reads are idempotent, so
    `ZkSession.call` sends one again after a connection loss, never a write)."""
    got = session.get(path, timeout_s=_left(deadline))
    if got is None:
        return None
    data, stat = got
    return _Node(data or b"", stat.version, stat.ephemeral_owner)


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())


class FenceNotAppliedError(ZkUnreachableError):
    """The fence's reply was lost and the read-back shows it did not apply: ZooKeeper was not
    changed (exit 3, as its base). A caller tells this from a fence whose fate is unknown by
    its class, never by its message."""


@dataclass(frozen=True, slots=True)
class FenceState:
    """`/controller_epoch`, `/controller` and `/migration` as read right now."""

    controller_epoch: int | None
    epoch_zk_version: int | None
    controller: bytes | None
    controller_zk_version: int | None
    controller_ephemeral: bool
    migration: bytes | None
    migration_zk_version: int | None

    @property
    def kraft_controller_epoch(self) -> int:
        """The `kraftControllerEpoch` of the current `/controller` (-1 for none or a ZK one)."""
        return claim_kraft_epoch(self.controller)


def claim_kraft_epoch(claim: bytes | None) -> int:
    """A `/controller` claim's `kraftControllerEpoch`: -1 for none, a ZooKeeper controller's,
    or one that does not parse."""
    if claim is None:
        return -1
    try:
        return int(json.loads(claim).get("kraftControllerEpoch", -1))
    except (ValueError, AttributeError, TypeError):
        return -1


def read_fence_state(session: ZkSession, *, synced: bool = False,
                     timeout_s: float | None = None) -> FenceState:
    """Read the three znodes the fence is about, all within one deadline (connection losses
    retried until then, `ZkSession.call`).

    Args:
        synced: `sync()` first. A read-back of whether a fence applied needs it: the server
            this session talks to may be a follower that has not applied a commit yet, and
            "not applied" read there would fence a second time.
        timeout_s: the deadline for the whole read (default the session's `retry_s`).

    Raises:
        ZkUnreachableError: no answer within the deadline.
        ZkReaderError: `/controller_epoch` is not a decimal number.
    """
    deadline = time.monotonic() + (session.retry_s if timeout_s is None else timeout_s)
    if synced:
        session.sync(_paths.CONTROLLER_EPOCH, timeout_s=_left(deadline))
    ep = _get(session, _paths.CONTROLLER_EPOCH, deadline)
    ctl = _get(session, _paths.CONTROLLER, deadline)
    mig = _get(session, _paths.MIGRATION, deadline)
    epoch = None
    if ep is not None:
        text = ep.data.decode("ascii", "replace").strip()
        if not text.isdigit():
            raise ZkReaderError(f"{_paths.CONTROLLER_EPOCH}: {text!r} is not a number")
        epoch = int(text)
    return FenceState(
        epoch, None if ep is None else ep.version,
        None if ctl is None else ctl.data, None if ctl is None else ctl.version,
        ctl is not None and ctl.ephemeral_owner != 0,
        None if mig is None else mig.data, None if mig is None else mig.version,
    )


def _failed_op(results: list[Any]) -> BaseException | None:
    for r in results:
        if isinstance(r, BaseException) and not type(r).__name__ == "RolledBackError":
            return r
    return None


def fence_zk_controller(
    session: ZkSession,
    *,
    kraft_controller_id: int,
    kraft_epoch: int,
    timestamp_ms: int,
    migration_version: int,
    on_sent: Callable[[], None] | None = None,
    in_flight: Callable[[], None] | None = None,
) -> FenceToken:
    """Claim ZooKeeper's controller role with one multi-op (module docstring).

    Args:
        session: the run's session.
        kraft_controller_id: the voter id written as `/controller`'s `brokerid`.
        kraft_epoch: the log's leader epoch, written as `kraftControllerEpoch`.
        timestamp_ms: `/controller`'s timestamp.
        migration_version: `/migration`'s znode version when the run read and judged the
            tree, or `MIGRATION_ABSENT`; the multi-op writes `/migration` only at that version
            (creates it only if it is still absent).
        on_sent: called just before the multi-op is sent (t0 and crash-injection hook).
        in_flight: called once the multi-op was handed to the connection, before its reply is
            read (a crash there leaves a fence that may or may not have applied).

    Returns:
        The fence token (versions every later write checks).

    Raises:
        ControllerMovedError: a KRaft controller already holds `/controller` with an epoch at
            or above ours, or `/controller_epoch` moved under us.
        MigrationMovedError: `/migration` is not at `migration_version` (nothing applied; the
            caller must not retry blindly: what wrote it must be found out).
        ZkUnreachableError: ZooKeeper stayed unreachable (the read-back then could not tell;
            the message says to re-run, which resumes from the journal).
    """
    client = session.kazoo
    before = read_fence_state(session)
    if before.kraft_controller_epoch >= kraft_epoch:
        raise ControllerMovedError(
            f"{_paths.CONTROLLER} already holds a KRaft controller claim with "
            f"kraftControllerEpoch {before.kraft_controller_epoch} >= ours ({kraft_epoch}); "
            "another KRaft controller owns this cluster"
        )
    now = MIGRATION_ABSENT if before.migration_zk_version is None else before.migration_zk_version
    if now != migration_version:
        raise MigrationMovedError(_migration_moved(migration_version, now))
    new_epoch = (before.controller_epoch or 0) + 1
    claim = claim_json(kraft_controller_id, kraft_epoch, timestamp_ms)
    migration = migration_json(MigrationState(kraft_controller_id, kraft_epoch))
    tx = client.transaction()
    if before.epoch_zk_version is None:
        tx.create(_paths.CONTROLLER_EPOCH, str(new_epoch).encode())
    else:
        tx.set_data(_paths.CONTROLLER_EPOCH, str(new_epoch).encode(),
                    version=before.epoch_zk_version)
    if before.controller_zk_version is not None:
        tx.delete(_paths.CONTROLLER, version=before.controller_zk_version)
    tx.create(_paths.CONTROLLER, claim)
    if migration_version == MIGRATION_ABSENT:
        tx.create(_paths.MIGRATION, migration)  # fails if someone created it meanwhile
    else:
        tx.set_data(_paths.MIGRATION, migration, version=migration_version)
    if on_sent is not None:
        on_sent()
    try:
        results = _commit(session, tx, in_flight, _paths.CONTROLLER_EPOCH)
    except _LOST as exc:
        log.warning("the fence's reply was lost or late (%s); reading back whether it applied",
                    type(exc).__name__)
        return _fence_readback(session, before, new_epoch, claim)
    failed = _failed_op(results)
    if failed is not None and failed is results[-1]:  # the /migration op, written last
        after = _get(session, _paths.MIGRATION, time.monotonic() + session.retry_s)
        raise MigrationMovedError(_migration_moved(
            migration_version, MIGRATION_ABSENT if after is None else after.version))
    if failed is not None:
        raise ControllerMovedError(
            f"the fence multi-op failed ({type(failed).__name__}): /controller_epoch, "
            "/controller or /migration changed between our read and our write; another "
            "controller is active. Nothing was changed (the multi-op is atomic)"
        )
    # set_data answers with the new stat, create with the path (a new znode is at version 0),
    # so the versions come from the reply: no read inside the controller-less window.
    epoch_stat, migration_stat = results[0], results[-1]
    epoch_version = epoch_stat.version if hasattr(epoch_stat, "version") else 0
    migration_version = migration_stat.version if hasattr(migration_stat, "version") else 0
    return FenceToken(new_epoch, epoch_version, migration_version, claim)


class _NoReplyInTime(Exception):
    """A multi-op's reply did not come within the session's `retry_s`: like a lost reply, the
    write may or may not have applied, and only a read-back tells."""


def _commit(session: ZkSession, tx: Any, in_flight: Callable[[], None] | None, path: str
            ) -> list[Any]:
    """Send a multi-op and wait for its reply (at most the session's `retry_s`: kazoo keeps a
    request made while ZooKeeper is down queued, and a reply that never comes must not hold
    the run), calling `in_flight` in between.

    Raises:
        ConnectionLoss / OperationTimeoutError / _NoReplyInTime (`_LOST`): read back.
        ZkUnreachableError / ZkReaderError: as `ZkSession.wait` (a session expiry too).
    """
    reply = tx.commit_async()
    if in_flight is not None:
        in_flight()
    limit = session.retry_s
    try:
        return list(session.wait(reply, path, deadline=time.monotonic() + limit,
                                 limit_s=limit))
    except ZkUnreachableError as exc:
        if reply.ready():  # answered: an expiry or a closed connection, not a silence
            raise
        raise _NoReplyInTime(str(exc)) from None


_LOST = (ConnectionLoss, OperationTimeoutError, _NoReplyInTime)


def _migration_moved(judged: int, now: int) -> str:
    def say(version: int) -> str:
        return "absent" if version == MIGRATION_ABSENT else f"at version {version}"

    return (f"{_paths.MIGRATION} changed since this run read and judged it (it was "
            f"{say(judged)}, it is now {say(now)}): a KRaft controller in migration mode or "
            "another tool wrote it. The fence was not applied and is not retried: nothing in "
            "ZooKeeper was changed and ZooKeeper's controller keeps running. Find out what "
            f"wrote {_paths.MIGRATION} before migrating; a re-run of the same command judges it "
            "again before fencing")


def _fence_readback(session: ZkSession, before: FenceState, new_epoch: int, claim: bytes
                    ) -> FenceToken:
    deadline = time.monotonic() + session.retry_s
    while True:
        try:
            now = read_fence_state(session, synced=True, timeout_s=_left(deadline))
            break
        except ZkUnreachableError:
            if time.monotonic() >= deadline:
                raise ZkUnreachableError(
                    "lost the ZooKeeper connection while the fence was in flight and could not "
                    "read back whether it applied; re-run the same command (it resumes from "
                    "the journal and reads back before doing anything)") from None
    if now.controller == claim and now.controller_epoch == new_epoch:
        log.warning("read back: the fence had applied (epoch %d)", new_epoch)
        assert now.epoch_zk_version is not None and now.migration_zk_version is not None
        return FenceToken(new_epoch, now.epoch_zk_version, now.migration_zk_version, claim,
                          already_applied=True)
    if now.epoch_zk_version == before.epoch_zk_version:
        raise FenceNotAppliedError(
            "the fence's reply was lost and the read-back shows it did not apply (nothing "
            "changed in ZooKeeper); re-run the same command to fence again")
    raise ControllerMovedError(
        f"the fence's reply was lost and /controller_epoch moved to {now.controller_epoch} "
        "without our claim: another controller acted; not fencing")


def write_migration_state(session: ZkSession, token: FenceToken, state: MigrationState, *,
                          in_flight: Callable[[], None] | None = None) -> int:
    """Write `/migration` in a multi-op checking `/controller_epoch` at the fence's version.

    Never blindly: the multi-op sets `/migration` only at the version the fence left
    (`token.migration_zk_version`), so it applies at most once and never over a `/migration`
    rewritten or removed since (a KRaft controller, a rollback, another tool). It is sent
    first, in one round trip; only when it fails, or its reply is lost, is `/migration` read
    back (after a `sync()`): holding exactly `state` means this write had already applied (a
    resume after a crash, or an earlier send whose reply was lost), and that is success.

    Args:
        in_flight: called once the multi-op was handed to the connection, before its reply is
            read (a crash there leaves a write that may or may not have applied).

    Returns:
        `/migration`'s new znode version.

    Raises:
        ControllerMovedError: `/controller_epoch` moved (we are fenced out).
        MigrationMovedError: `/migration` is not the one the fence left, nor ours.
        ZkUnreachableError: ZooKeeper stayed unreachable and the read-back could not tell.
    """
    client = session.kazoo
    data = migration_json(state)
    tx = client.transaction()
    tx.check(_paths.CONTROLLER_EPOCH, token.epoch_zk_version)
    tx.set_data(_paths.MIGRATION, data, version=token.migration_zk_version)
    try:
        results = _commit(session, tx, in_flight, _paths.MIGRATION)
    except _LOST as exc:
        log.warning("the /migration write's reply was lost (%s); reading back whether it "
                    "applied", type(exc).__name__)
        after = _read_migration_synced(session)
        if after is not None and after.data == data:
            return after.version  # it applied
        if after is None or after.version != token.migration_zk_version:
            raise MigrationMovedError(_migration_rewritten(token, after)) from None
        # not applied, and still where the fence left it: send it again (at the same version)
        return write_migration_state(session, token, state, in_flight=in_flight)
    failed = _failed_op(results)
    if failed is None:
        stat = results[1]
        return stat.version if hasattr(stat, "version") else 0
    # Refused: an earlier send of this very write (a crashed run's, or one whose reply was
    # lost) may have applied and moved the version; that is success. Checked in the order the
    # read-back-first protocol did: /migration's content, then its version, then the epoch.
    after = _read_migration_synced(session)
    if after is not None and after.data == data:
        return after.version
    if after is None or after.version != token.migration_zk_version:
        raise MigrationMovedError(_migration_rewritten(token, after))
    raise ControllerMovedError(
        f"writing /migration failed ({type(failed).__name__}): /controller_epoch is no "
        f"longer at version {token.epoch_zk_version}; another controller fenced us")


def _read_migration_synced(session: ZkSession) -> _Node | None:
    """`/migration` after a `sync()`: the server this session talks to has caught up with the
    leader, so a write that applied (ours from a crashed run or a lost reply) is seen."""
    deadline = time.monotonic() + session.retry_s
    session.sync(_paths.MIGRATION, timeout_s=_left(deadline))
    return _get(session, _paths.MIGRATION, deadline)


def _migration_rewritten(token: FenceToken, now: _Node | None) -> str:
    said = "absent" if now is None else f"at version {now.version} with other content"
    return (f"{_paths.MIGRATION} is {said}, not at version {token.migration_zk_version} where "
            "the fence left it: something rewrote it since the fence (a KRaft controller, a "
            "rollback, another tool); not overwriting it. Nothing was written")


def release_claim(session: ZkSession, *, min_controller_epoch: int,
                  expect_controller: bytes | None) -> dict[str, Any]:
    """Undo a KRaft claim for a rollback: remove our `/controller` and `/migration`, and lift
    `/controller_epoch` to at least `min_controller_epoch` (KAFKA-20488: a ZooKeeper controller
    whose epoch is not above the epoch written into partition state znodes aborts its leader
    elections for those partitions). One multi-op, checking `/controller_epoch`'s version.

    Returns:
        What was done: {"controller_epoch": before/after, "removed": [...]}.

    Args:
        expect_controller: the `/controller` bytes the caller judged removable (None: none was
            there); anything else there now is refused, and the delete checks its version.

    Raises:
        ControllerMovedError: `/controller` is a live ZooKeeper controller's (nothing to undo
            there), is not what the caller judged, or something moved while we wrote.
    """
    client = session.kazoo
    now = read_fence_state(session)
    if now.controller is not None and now.controller_ephemeral:
        raise ControllerMovedError(
            f"{_paths.CONTROLLER} is held by a ZooKeeper controller (ephemeral node), not a "
            "KRaft claim: there is no cutover to roll back")
    if now.controller != expect_controller:
        raise ControllerMovedError(
            f"{_paths.CONTROLLER} changed since the rollback judged it; nothing was changed, "
            "re-run")
    tx = client.transaction()
    removed: list[str] = []
    epoch = now.controller_epoch or 0
    target = max(epoch, min_controller_epoch)
    if now.epoch_zk_version is None:
        tx.create(_paths.CONTROLLER_EPOCH, str(target).encode())
    else:
        tx.set_data(_paths.CONTROLLER_EPOCH, str(target).encode(), version=now.epoch_zk_version)
    if now.controller_zk_version is not None:
        tx.delete(_paths.CONTROLLER, version=now.controller_zk_version)
        removed.append(_paths.CONTROLLER)
    if now.migration_zk_version is not None:
        tx.delete(_paths.MIGRATION, version=now.migration_zk_version)
        removed.append(_paths.MIGRATION)
    limit = session.retry_s
    try:
        results = session.wait(tx.commit_async(), _paths.CONTROLLER,
                               deadline=time.monotonic() + limit, limit_s=limit)
    except (ConnectionLoss, OperationTimeoutError) as exc:
        raise map_kazoo_error(exc, _paths.CONTROLLER) from exc
    failed = _failed_op(results)
    if failed is not None:
        raise ControllerMovedError(
            f"the rollback multi-op failed ({type(failed).__name__}): /controller_epoch, "
            "/controller or /migration changed while we wrote; nothing was changed, re-run")
    return {"controller_epoch": {"before": now.controller_epoch, "after": target},
            "removed": removed}


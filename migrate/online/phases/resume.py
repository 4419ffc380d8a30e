"""Whether a fence an earlier run of this migration sent applied: the read-back a re-run makes
before it does anything else (at `fencing`, or at `mirror` holding claims an earlier read-back
found "not applied"), and the same judgement when the re-run's resync or its own fence finds a
KRaft claim in `/controller` (docs/design/online-run.md: never fence twice).

Every answer is an outcome for the driver (`phases.Advance`): `fenced` with the token when one
of our claims holds `/controller`, `mirror` (mirroring again before fencing) when none applied.
"""

from __future__ import annotations

from migrate.online.fence_status import ZkFence, zk_lost
from migrate.online.phases import Advance, Phase
from migrate.online.phases.context import RunContext, claim_timestamp
from writers import pause_point as _pause  # test-only hooks (writers/_faults.py)
from zkreader import FenceState, FenceToken, ZkUnreachableError

__all__ = ["earlier_fence_applied", "our_applied_fence", "read_back"]


def read_back(c: RunContext) -> Advance:
    """A re-run whose journal holds claims not known applied: did one of our fences apply?

    Raises:
        ZkUnreachableError: ZooKeeper did not answer; it carries `ZkFence.MAY_BE_FENCED`.
    """
    try:
        now = c.zk.read_fence_state(synced=True)
    except ZkUnreachableError as exc:  # an earlier run's fence was sent: it may have applied
        raise zk_lost(exc, ZkFence.MAY_BE_FENCED, journal=c.journal.path) from None
    found = _found(c, now)
    if found is not None:
        return found
    c.sink.say("the previous run stopped before its fence applied (read back); "
               "mirroring again before fencing")
    return Advance(Phase.MIRROR, {"claim": None}, then=lambda: _pause("after_readback"))


def earlier_fence_applied(c: RunContext) -> Advance | None:
    """The resync or this run's fence found a KRaft claim in `/controller`: `fenced` when it is
    one of ours (an earlier run's fence that applied after all), else None (someone else's)."""
    return _found(c, c.zk.read_fence_state(synced=True))


def _found(c: RunContext, now: FenceState) -> Advance | None:
    """`fenced` with our token when `now` shows one of our fences applied, saying so once that
    is journaled; None otherwise."""
    token = our_applied_fence(c.journal.claims, now)
    if token is None:
        return None
    if now.controller == (c.journal.claim or "").encode():
        line = "the previous run's fence had applied (read back); finishing the drain"
    else:
        sent = claim_timestamp(token.claim)
        line = (f"an earlier run's fence (its claim timestamped {sent}) had applied "
                f"after all (read back: /controller_epoch {now.controller_epoch}); it "
                "is ours, so not fencing again: finishing the drain")
    return Advance(Phase.FENCED, {"fence": token.to_json()}, then=lambda: c.sink.say(line))


def our_applied_fence(claims: list[str], now: FenceState) -> FenceToken | None:
    """The token of our fence when `now` (read after a `sync()`) shows one applied, else None.

    Ours means: `/controller` is a persistent node holding exactly one of `claims` (the
    journal's: every fence any run of this migration sent). Each carries its own millisecond
    timestamp, and only our fence multi-op creates it, bumping `/controller_epoch` in the same
    commit; anything else (another KRaft controller's claim, even with our broker id and
    epoch) stays someone else's.
    """
    if (now.controller is None or now.controller_ephemeral
            or now.controller not in [claim.encode() for claim in claims]
            or now.controller_epoch is None or now.epoch_zk_version is None
            or now.migration_zk_version is None):
        return None
    return FenceToken(now.controller_epoch, now.epoch_zk_version, now.migration_zk_version,
                      now.controller, already_applied=True)

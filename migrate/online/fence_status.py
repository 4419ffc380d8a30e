"""Where the cluster stands when ZooKeeper stops answering at the cutover: the fence's state as
data on the error that ends the run, and the message that says it (docs/design/online-run.md, "Every
wait at the cutover has a bound").

The run knows, from its own steps, whether ZooKeeper is fenced: before the fence multi-op is
sent it is not; once its reply (or the read-back of a lost reply) confirmed it, it is; sent and
never answered, nobody can know until ZooKeeper answers again. The error carries that as its
`zookeeper_fence` attribute (`fence_of`), so the driver decides what to add by looking at it,
never by searching the message's words.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import TypeVar

from zkreader import FenceToken, ZkUnreachableError

__all__ = ["ZkFence", "fence_of", "marked", "zk_lost"]

_ATTRIBUTE = "zookeeper_fence"
E = TypeVar("E", bound=BaseException)


class ZkFence(enum.Enum):
    """ZooKeeper's controller, as the run's own steps left it."""

    NOT_FENCED = "not fenced"  # the fence was never sent, or read back as not applied
    MAY_BE_FENCED = "may be fenced"  # sent, and no reply or read-back came
    FENCED = "fenced"  # the fence applied (its reply, or a read-back of our claim)


def marked(exc: E, fence: ZkFence) -> E:
    """`exc`, carrying `fence` (read back with `fence_of`)."""
    setattr(exc, _ATTRIBUTE, fence)
    return exc


def fence_of(exc: BaseException) -> ZkFence | None:
    """The fence state an error of the cutover carries, or None for one that says nothing
    about it."""
    found = getattr(exc, _ATTRIBUTE, None)
    return found if isinstance(found, ZkFence) else None


def zk_lost(exc: ZkUnreachableError, fence: ZkFence, *, journal: Path,
            controller_id: int | None = None, token: FenceToken | None = None,
            log_closed_at: int | None = None) -> ZkUnreachableError:
    """ZooKeeper stopped answering at the cutover: the same error class (exit 3), its message
    saying whether ZooKeeper is fenced, what the cluster has now, and the next step.

    Args:
        exc: what the bounded ZooKeeper call raised.
        fence: where the fence stands (the run's own state).
        journal: the run's journal, which lets the re-run finish.
        controller_id / token: the claim, when `fence` is FENCED.
        log_closed_at: the log's last offset once the drain closed it (`/migration` not yet
            written), else None.
    """
    rerun = (f"Restart ZooKeeper, then re-run this same command: the journal ({journal}) lets "
             "it finish")
    if fence is ZkFence.NOT_FENCED:
        text = ("ZooKeeper is NOT fenced: nothing in ZooKeeper was changed, so the cluster still "
                "has ZooKeeper's controller (it serves again once ZooKeeper does), and the KRaft "
                "log stays open, so no KRaft controller takes over. "
                f"{rerun} (it mirrors what changed meanwhile, then cuts over)")
    elif fence is ZkFence.MAY_BE_FENCED:
        text = ("ZooKeeper MAY be fenced: the fence multi-op was sent and neither its reply "
                "nor a read-back came, so whether it applied is unknown until ZooKeeper answers. "
                "If it applied, the cluster has no controller (ZooKeeper's can no longer write "
                "and the KRaft log is not closed); if not, it still has ZooKeeper's controller. "
                f"{rerun} (it reads back whether the fence applied, never fencing twice, and "
                "then finishes the drain or fences)")
    else:
        assert token is not None
        where = ("the log is not closed" if log_closed_at is None else
                 f"the log is closed at offset {log_closed_at} but /migration does not name it")
        text = (f"ZooKeeper IS fenced (/controller claimed by {controller_id}, "
                f"/controller_epoch {token.controller_epoch}) and {where}, so the cluster has "
                "NO controller: ZooKeeper's can no longer write and no KRaft controller takes "
                f"over yet. {rerun} (the drain, /migration and the handoff), or run "
                "`zk2kraft rollback` to hand the cluster back to ZooKeeper's controller")
    return marked(type(exc)(f"{exc}. {text}"), fence)

"""Errors raised while reading Kafka's tree from ZooKeeper.

    ZkReaderError                 root (exit codes: migrate/cli/exit_codes.py)
    ├── ZnodeFormatError          a znode's data is malformed or of an unknown version (exit 2)
    ├── BadConnectStringError     the zookeeper.connect string is not valid (exit 2)
    └── ZkUnreachableError        no session within the timeout, or the session was lost (exit 3)
        └── ZkSessionExpiredError the session expired: its watches are gone
"""

from __future__ import annotations

__all__ = [
    "BadConnectStringError",
    "ZkReaderError",
    "ZkSessionExpiredError",
    "ZkUnreachableError",
    "ZnodeFormatError",
]


class ZkReaderError(Exception):
    """Root of every error raised by `zkreader`."""


class ZnodeFormatError(ZkReaderError):
    """A znode's content is not what Kafka writes there; names the path and the problem."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


class BadConnectStringError(ZkReaderError):
    """The `--zookeeper` value is not Kafka's `host:port[,host:port][/chroot]` form."""


class ZkUnreachableError(ZkReaderError):
    """ZooKeeper could not be reached (or the session was lost) within the timeout."""


class ZkSessionExpiredError(ZkUnreachableError):
    """The ZooKeeper session expired: every watch it held is gone (the online mirror then
    re-reads the whole tree; everything else gives up as for any lost session)."""

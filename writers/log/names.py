"""Kafka's names in a metadata log directory: segment and snapshot files, directory ids."""

from __future__ import annotations

import base64
import hashlib

__all__ = ["directory_id_for", "segment_name", "snapshot_name"]


def segment_name(base_offset: int) -> str:
    """Kafka's segment file name for a base offset: 20 zero-padded digits + `.log`."""
    return f"{base_offset:020d}.log"


def snapshot_name(end_offset: int, epoch: int) -> str:
    """Kafka's snapshot file name (`Snapshots.filenameFromSnapshotId`); end offset is exclusive."""
    return f"{end_offset:020d}-{epoch:010d}.checkpoint"


def _uuid_text(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def directory_id_for(cluster_id: str, node_id: int, *, label: str = "directory.id") -> str:
    """A deterministic, non-reserved `directory.id` for a voter's metadata directory.

    Kafka generates a random one at format time; deriving it from cluster id and node id keeps
    re-runs byte-identical (design I6) while distinct nodes still get distinct ids. `label`
    separates the families of ids derived this way (a broker's log dir: `_broker_dirs`).

    Returns:
        The 22-character URL-safe base64 text of the Uuid (never reserved: Kafka's first 100
        Uuids; never starting with "-": Kafka's `DirectoryId.random` avoids both).
    """
    counter = 0
    while True:
        seed = f"zk2kraft {label}\0{cluster_id}\0{node_id}\0{counter}".encode()
        raw = hashlib.sha256(seed).digest()[:16]
        msb = int.from_bytes(raw[:8], "big")
        lsb = int.from_bytes(raw[8:], "big")
        text = _uuid_text(raw)
        if not (msb == 0 and lsb < 100) and not text.startswith("-"):
            return text
        counter += 1  # pragma: no cover - astronomically unlikely

"""The malformed-znode corpus (tests/integration/malformed/corpus.json) and how to plant it.

Every entry is a znode path, bytes Kafka would never write there, and the problem the error must
name. The reader, `snapshot`, `plan` and `migrate` tests all plant entries the same way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CORPUS: list[dict[str, str]] = json.loads(
    (Path(__file__).resolve().parents[1] / "integration" / "malformed" / "corpus.json")
    .read_text(encoding="utf-8"))
TOPIC = {"version": 3, "partitions": {"0": [1]}, "adding_replicas": {}, "removing_replicas": {},
         "topic_id": "Xpp3Z_egYWE0W-6cpvtoGg"}


def corpus_bytes(entry: dict[str, str]) -> bytes:
    """The entry's znode data."""
    return bytes.fromhex(entry["data_hex"]) if "data_hex" in entry else entry["data"].encode()


def write_malformed(client: Any, entry: dict[str, str]) -> None:
    """Create the entry's znode (and, for a partition state, the topic that names it)."""
    path = entry["path"]
    if path.endswith("/state"):  # the topic znode must name the partition for it to be read
        topic = path.split("/")[3]
        client.create(f"/brokers/topics/{topic}", json.dumps(TOPIC).encode(), makepath=True)
    client.create(path, corpus_bytes(entry), makepath=True)

"""`/latest_producer_id_block` as a fresh ZK-mode Kafka cluster leaves it: present, but empty.

Kafka pre-creates the path with no data and fills it on the first producer-id request; a real
3.9.1 broker's tree was rejected as malformed (exit 2) before the reader read "empty" as "no
block yet" (found by tests/oracle/test_zk_mode_kafka_tree.py).
"""

from __future__ import annotations

import pytest

from zkreader import ProducerIdBlock, ZnodeFormatError, ZnodeStat
from zkreader._znodes import ProducerIdBlockZnode

STAT = ZnodeStat(czxid=5, mzxid=5, version=0, ctime_ms=1, mtime_ms=1)


@pytest.mark.parametrize("data", [b"", None])
def test_empty_block_znode_means_no_block(data: bytes | None) -> None:
    assert ProducerIdBlockZnode().decode(data, STAT) is None


def test_filled_block_still_decodes_and_garbage_still_fails() -> None:
    block = ProducerIdBlockZnode().decode(
        b'{"version":1,"broker":0,"block_start":"0","block_end":"999"}', STAT)
    assert isinstance(block, ProducerIdBlock)
    assert (block.broker_id, block.block_start, block.block_end) == (0, 0, 999)
    with pytest.raises(ZnodeFormatError, match="/latest_producer_id_block"):
        ProducerIdBlockZnode().decode(b" ", STAT)

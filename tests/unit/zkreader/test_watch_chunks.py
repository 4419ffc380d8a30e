"""The re-arm after a reconnect splits SetWatches as ZooKeeper's own client does (128 KiB of
paths per request), so 100k+ armed watches never make one request past jute.maxbuffer."""

from __future__ import annotations

from zkreader._watch import SET_WATCHES_MAX_BYTES, _chunks


def test_every_path_once_in_order_and_no_chunk_over_the_limit() -> None:
    data = [f"/brokers/topics/t{i}/partitions/{i % 100}/state" for i in range(120_000)]
    exist = ["/controller", "/admin/reassign_partitions"]
    child = ["/brokers/ids", "/brokers/topics"]
    chunks = list(_chunks(data, exist, child))
    assert len(chunks) > 1
    for d, e, c in chunks:
        assert sum(len(p.encode()) + 4 for p in d + e + c) <= SET_WATCHES_MAX_BYTES
    assert [p for d, _, _ in chunks for p in d] == data
    assert [p for _, e, _ in chunks for p in e] == exist
    assert [p for _, _, c in chunks for p in c] == child


def test_few_watches_are_one_request() -> None:
    assert list(_chunks(["/a"], [], ["/b"])) == [(["/a"], [], ["/b"])]
    assert list(_chunks([], [], [])) == []

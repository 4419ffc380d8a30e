"""Voter faults with real directories: a voter becomes unwritable mid-run, two of three do, and
the writing process is killed mid-stream (design I1, I5).

"Unwritable" is real: `chattr +i` on the voter's files and directories (root is not stopped by
permissions, and an immutable inode refuses writes even through an already open descriptor).
Batches are valid v2 frames with opaque record bytes, so these tests need no record codec.
"""

from __future__ import annotations

import signal
import struct
import subprocess
import sys
from pathlib import Path

import crc32c
import pytest

from migrate.cli.exit_codes import exit_code_for
from tests.support.immutable import Immutable, voter_paths
from writers import (
    EncodedBatch,
    QuorumWriter,
    VoterDir,
    VoterUnavailableError,
    scan_frames,
)

CLUSTER = "hoZ1PKcBRjKUt1oizWckJQ"
SEG = "__cluster_metadata-0/00000000000000000000.log"
ROOT = Path(__file__).resolve().parents[2]


def frame(base: int, count: int = 1, epoch: int = 1, pad: int = 64) -> EncodedBatch:
    """A valid v2 batch frame (header + CRC-32C) around `pad` opaque record bytes."""
    after_crc = struct.pack(">hiqqqhii", 0, count - 1, 0, 0, -1, -1, -1, count) + bytes(pad)
    head = struct.pack(">qiibI", base, 9 + len(after_crc), epoch, 2, crc32c.crc32c(after_crc))
    return EncodedBatch(base, base + count - 1, epoch, head + after_crc)


def _offsets(path: Path) -> list[int]:
    return [f.base_offset for f in scan_frames(path.read_bytes(), file=str(path),
                                               expected_offset=0)]


def test_one_voter_unwritable_mid_run_is_dropped_and_write_continues(
    tmp_path: Path, immutable: Immutable
) -> None:
    dirs = [tmp_path / f"v{i}" for i in (1, 2, 3)]
    q = QuorumWriter([VoterDir(d, node_id=i, cluster_id=CLUSTER) for i, d in enumerate(dirs, 1)])
    for off in range(10):
        q.append_encoded(frame(off))
    q.flush()
    immutable.freeze(voter_paths(dirs[2]))
    for off in range(10, 30):
        q.append_encoded(frame(off))
    q.flush()
    assert q.live_voters == [1, 2]
    assert [(f.node_id, f.offset) for f in q.failures] == [(3, 10)]
    assert "voter 3" in q.failures[0].error and "Operation not permitted" in q.failures[0].error
    q.close()
    assert _offsets(dirs[0] / SEG) == list(range(30))
    assert (dirs[1] / SEG).read_bytes() == (dirs[0] / SEG).read_bytes()
    assert _offsets(dirs[2] / SEG) == list(range(10))  # a valid prefix, nothing torn


def test_two_of_three_unwritable_is_voter_unavailable(
    tmp_path: Path, immutable: Immutable
) -> None:
    dirs = [tmp_path / f"v{i}" for i in (1, 2, 3)]
    q = QuorumWriter([VoterDir(d, node_id=i, cluster_id=CLUSTER) for i, d in enumerate(dirs, 1)])
    for off in range(5):
        q.append_encoded(frame(off))
    q.flush()
    immutable.freeze(voter_paths(dirs[0]) + voter_paths(dirs[2]))
    with pytest.raises(VoterUnavailableError) as err:
        q.append_encoded(frame(5))
    assert exit_code_for(err.value) == 3
    assert "only 1 of 3 voters writable" in str(err.value)
    assert "voter 1 at offset 5" in str(err.value) and "voter 3 at offset 5" in str(err.value)
    q.close()
    for d in dirs:
        assert _offsets(d / SEG)[:5] == list(range(5))


_WRITER = r"""
import sys
sys.path.insert(0, {root!r})
from pathlib import Path
from tests.fault.test_voter_faults import frame, CLUSTER
from writers import QuorumWriter, VoterDir
dirs = [Path(p) for p in sys.argv[1:]]
q = QuorumWriter([VoterDir(d, node_id=i, cluster_id=CLUSTER) for i, d in enumerate(dirs, 1)])
off = 0
while True:
    q.append_encoded(frame(off, 1, 1, pad=4096))
    print(off, flush=True)  # durable on a majority now
    off += 1
"""


@pytest.mark.slow
def test_killed_writer_leaves_valid_prefixes_holding_every_acknowledged_batch(
    tmp_path: Path,
) -> None:
    dirs = [tmp_path / f"v{i}" for i in (1, 2, 3)]
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER.format(root=str(ROOT)), *map(str, dirs)],
        stdout=subprocess.PIPE, text=True, cwd=ROOT,
    )
    assert proc.stdout is not None
    acked = -1
    for line in proc.stdout:
        acked = int(line)
        if acked >= 300:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    # anything printed after the 300th line was also acknowledged before the kill
    rest = proc.stdout.read()
    acked = max([acked, *(int(x) for x in rest.split())])
    ends = []
    for i, d in enumerate(dirs, 1):
        with VoterDir(d, node_id=i, cluster_id=CLUSTER, recover_tail=True) as v:
            ends.append(v.next_offset)
            assert _offsets(d / SEG) == list(range(v.next_offset))
    # every batch acknowledged as durable is on at least a majority of voters
    assert sorted(ends)[1] >= acked + 1, (ends, acked)

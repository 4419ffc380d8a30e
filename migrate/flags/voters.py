"""The `--voter ID=DIR` rules, once for `plan`, `migrate` and `verify`.

Each command used to check its voters with its own rules (verify allowed nested directories,
plan allowed the same directory twice, only migrate refused both), so `plan` could call a voter
set fine that `migrate` then refused. One parser now says what a voter set is:

- syntax (`parse_voter`, the argparse type): `ID=DIR` with a non-negative integer id;
- the set (`check_voter_flags`): at least one voter when the command needs one, every node id
  and every directory once, no directory inside another (each voter needs its own
  metadata.log.dir), and nothing that exists as a file where a directory is named.

All of these are exit 2 naming the flag, before anything connects. Whether a directory can be
written is migrate's own question (exit 3) and stays in `migrate.bulk.voters.check_voters`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from migrate.errors import BadFlagError

__all__ = ["check_voter_flags", "parse_voter"]


_MAX_NODE_ID = 2**31 - 1


def parse_voter(value: str) -> tuple[int, Path]:
    """Parse one `--voter ID=DIR` value (the argparse `type` of every `--voter`).

    Raises:
        argparse.ArgumentTypeError: the value is not `ID=DIR` with an id in 0..2^31-1.
    """
    node, sep, directory = value.partition("=")
    if not sep or not directory:
        raise argparse.ArgumentTypeError(
            f"--voter {value!r}: expected ID=DIR (a controller node id and its metadata.log.dir)"
        )
    try:
        node_id = int(node)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--voter {value!r}: node id {node!r} is not an integer"
        ) from None
    if not 0 <= node_id <= _MAX_NODE_ID:
        raise argparse.ArgumentTypeError(
            f"--voter {value!r}: node id must be 0..{_MAX_NODE_ID} (Kafka's node.id is an int32)"
        )
    return node_id, Path(directory)


def check_voter_flags(
    voters: Sequence[tuple[int, Path]] | None, *, required: bool
) -> list[tuple[int, Path]]:
    """Check a set of `--voter` values as every command must (module docstring for the rules).

    Args:
        voters: the parsed `--voter` values in command-line order (None when none was given).
        required: the command needs at least one voter (`migrate`, `verify`).

    Returns:
        (node id, absolute directory) pairs in command-line order (the first one is
        quorum-state's leader in `migrate` and the replayed voter in `verify`).

    Raises:
        BadFlagError: a rule is broken; the message names `--voter` and the value.
    """
    if not voters:
        if required:
            raise BadFlagError("--voter: at least one ID=DIR is required")
        return []
    out: list[tuple[int, Path]] = []
    ids: set[int] = set()
    dirs: dict[Path, int] = {}
    for node_id, directory in voters:
        path = Path(directory).expanduser().resolve()
        if node_id in ids:
            raise BadFlagError(f"--voter {node_id}={directory}: node id {node_id} given twice")
        ids.add(node_id)
        for other, other_id in dirs.items():
            if path == other or path.is_relative_to(other) or other.is_relative_to(path):
                raise BadFlagError(
                    f"--voter {node_id}={directory}: same or nested directory as voter "
                    f"{other_id} ({other}); every voter needs its own metadata.log.dir"
                )
        dirs[path] = node_id
        if path.exists() and not path.is_dir():
            raise BadFlagError(f"--voter {node_id}={directory}: exists and is not a directory")
        out.append((node_id, path))
    return out

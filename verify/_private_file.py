"""Write report files the way secrets-adjacent files must be written: 0600 and atomically.

Reports (`--json`, `--html`, `snapshot --out`) describe a cluster's security set-up, so they are
created with mode 0600 from the first byte (never chmod'ed after the fact), and they appear
complete or not at all: the bytes go to a temporary file in the same directory, are fsync'd, and
are renamed over the target. On any error the temporary file is removed and the target is left
as it was. This is the one implementation; `migrate` uses it through `verify`'s public API.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

__all__ = ["open_private", "write_private"]


@contextlib.contextmanager
def open_private(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """Open a temporary 0600 file next to `path`; on a clean exit, fsync and rename it there.

    Raises:
        OSError: the directory is not writable (the temporary file is removed on any error).
    """
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_private(path: str | os.PathLike[str], chunks: Iterable[bytes]) -> None:
    """Write `chunks` to `path` atomically with mode 0600 (see `open_private`)."""
    with open_private(path) as out:
        for chunk in chunks:
            out.write(chunk)

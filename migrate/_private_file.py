"""Report files named on the command line: checked before any work starts, then written.

Writing them (0600, atomically, durably) is `writers.replace_private`, the one private-file
writer; this module only adds the flag to errors and the `-` (stdout) case.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import orjson

from migrate.errors import BadFlagError, ReportWriteError
from writers import StagedVoter, replace_private

__all__ = [
    "check_output_path",
    "check_output_paths",
    "voter_dirs",
    "write_json_report",
    "write_private",
    "write_report",
]


def check_output_path(flag: str, value: str | None) -> None:
    """Fail early (exit 2, naming the flag) if a report could not be written at `value`.

    `-` (stdout) and None (not asked for) are always fine.

    The check creates (and removes) a file next to the target, as the real write will: asking
    `os.access` is not enough, since root passes it on a read-only or immutable directory.

    Raises:
        BadFlagError: the parent directory is missing or not writable, or the path is a
            directory (or an existing file that cannot be replaced).
    """
    if value is None or value == "-":
        return
    path = Path(value)
    if path.is_dir():
        raise BadFlagError(f"{flag} {value!r}: is a directory")
    if not path.parent.is_dir():
        raise BadFlagError(f"{flag} {value!r}: directory {str(path.parent)!r} does not exist")
    probe = path.with_name(f".{path.name}.{os.getpid()}.probe")
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise BadFlagError(
            f"{flag} {value!r}: cannot write in {str(path.parent)!r}: {exc.strerror or exc}"
        ) from None


def voter_dirs(voters: Iterable[tuple[int, Path]] | Iterable[StagedVoter]
               ) -> list[tuple[str, Path]]:
    """The voter directories as `check_output_paths` names them: `--voter ID=DIR`."""
    out: list[tuple[str, Path]] = []
    for voter in voters:
        node_id, path = ((voter.node_id, voter.path) if isinstance(voter, StagedVoter)
                         else voter)
        out.append((f"--voter {node_id}={path}", path))
    return out


def check_output_paths(reports: Sequence[tuple[str, str | None]],
                       dirs: Sequence[tuple[str, Path]] = ()) -> None:
    """Refuse (exit 2, naming both flags) outputs that would overwrite each other, then try
    each report path (`check_output_path`); before anything is written.

    Collisions: two reports to stdout (`-`), two reports at one file (`plan --json F --html F`:
    F would hold only the second), and a report at or inside a directory the command writes
    (`migrate --voter 3000=D --json D`: a voter directory, the online journal), which would
    either fail after the work or put a stray file where Kafka reads its metadata.

    Args:
        reports: (flag, value) of each report flag; None (not given) is skipped.
        dirs: (how the command line names it, path) of each directory the command writes.

    Raises:
        BadFlagError: two outputs collide, or a report path cannot be written.
    """
    given = [(flag, value) for flag, value in reports if value is not None]
    to_stdout = [flag for flag, value in given if value == "-"]
    if len(to_stdout) > 1:
        raise BadFlagError(f"{' - and '.join(to_stdout)} -: only one document can go to stdout")
    files = [(flag, value, Path(value).expanduser().resolve())
             for flag, value in given if value != "-"]
    for i, (flag, value, path) in enumerate(files):
        for other_flag, other_value, other in files[:i]:
            if path == other:
                raise BadFlagError(f"{other_flag} {other_value!r} and {flag} {value!r}: the same "
                                   "file; one report would overwrite the other")
        for named, directory in dirs:
            where = directory.expanduser().resolve()
            if path == where or path.is_relative_to(where):
                raise BadFlagError(f"{flag} {value!r} and {named}: the report would be written "
                                   f"{'over' if path == where else 'inside'} that directory; "
                                   "put it elsewhere")
    for flag, value in given:
        check_output_path(flag, value)


def write_private(flag: str, path: str, chunks: Iterable[bytes]) -> None:
    """Write a report (0600, atomically), mapping an I/O failure to an error naming the flag.

    Raises:
        ReportWriteError: the file could not be written (exit 3); the target is unchanged.
    """
    try:
        with replace_private(path) as out:
            for chunk in chunks:
                out.write(chunk)
    except OSError as exc:
        raise ReportWriteError(f"{flag} {path!r}: cannot write: {exc.strerror or exc}") from exc


def write_report(flag: str, value: str | None, data: bytes) -> None:
    """Put a report where its flag says: stdout for `-` (flushed), a 0600 file for a path
    (`write_private`), nowhere for None. Every command's `--json` (and `plan --html`) goes here.

    Raises:
        ReportWriteError: the file could not be written (exit 3); the target is unchanged.
    """
    if value == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    elif value is not None:
        write_private(flag, value, [data])


def write_json_report(value: str | None, doc: object) -> None:
    """`write_report` for `--json`: the document indented, one trailing newline."""
    write_report("--json", value, orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")

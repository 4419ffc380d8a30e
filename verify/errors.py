"""Errors raised while replaying a log into an image and judging parity.

    VerifyError                   root
    └── ReplayError               a record does not apply to the image; names the offset (exit 2)
        └── UnknownRecordTypeError  a record type the replay router does not know (exit 2)
"""

from __future__ import annotations

__all__ = ["ReplayError", "UnknownRecordTypeError", "VerifyError"]


class VerifyError(Exception):
    """Root of every error raised by `verify`."""


class ReplayError(VerifyError):
    """A record does not apply to the image being built (unknown type, unknown topic id, ...).

    Attributes:
        problem: what is wrong, without the location.
        record_type: the record's type name, when known.
        offset: the record's log offset, when known (the loader fills it in).
    """

    def __init__(
        self, problem: str, *, record_type: str | None = None, offset: int | None = None
    ) -> None:
        where = []
        if record_type is not None:
            where.append(record_type)
        if offset is not None:
            where.append(f"at offset {offset}")
        super().__init__(f"{' '.join(where)}: {problem}" if where else problem)
        self.problem = problem
        self.record_type = record_type
        self.offset = offset

    def at(self, offset: int) -> ReplayError:
        """The same error, located at `offset` (used by the loader, which knows offsets)."""
        return type(self)(self.problem, record_type=self.record_type, offset=offset)


class UnknownRecordTypeError(ReplayError):
    """The record's type has no handler: replay never skips what it does not understand."""

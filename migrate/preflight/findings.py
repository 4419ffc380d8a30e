"""A pre-flight or translation finding: what is wrong, and which znode says so.

Findings are the common currency of `plan`, `migrate` and the translator: a blocker stops the
migration, a warning is reported and carried on. Both have the same shape so the JSON document of
the design (`{"code","message","path"}`) and the terminal tables are built one way.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Finding"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One blocker or warning.

    Attributes:
        code: stable machine-readable name, e.g. `TOPIC_WITHOUT_ID`; tests and operators key on it.
        message: one human sentence saying what is wrong and what happens because of it. Never
            contains a secret value (only config key names).
        path: the znode path the finding is about (chroot-relative), so an operator can look.
    """

    code: str
    message: str
    path: str

    def to_json(self) -> dict[str, str]:
        """Return the design's JSON form, `{"code": ..., "message": ..., "path": ...}`."""
        return {"code": self.code, "message": self.message, "path": self.path}

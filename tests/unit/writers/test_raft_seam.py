"""The Raft server's helpers see it through a public seam (issue 33): in `writers/raft/`, no
`_`-named member is reached on anything but `self` or `cls`.

Read from the source with `ast`, nothing imported: every attribute access `x._name` whose `x` is
not the bare name `self` or `cls` is reported; dunders (`__name__`, `__class__`) are allowed.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
RAFT = ROOT / "writers" / "raft"


def _private_reaches(source: str, filename: str) -> list[str]:
    """`file:line: expr._name` for each `_` member reached across a class boundary."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
            continue
        if node.attr.startswith("__") and node.attr.endswith("__"):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        found.append(f"{filename}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_checker_finds_what_it_must_and_lets_the_rest_pass() -> None:
    """On a hand-made snippet: each line's verdict written out here."""
    snippet = "\n".join([
        "self._raft.hw",  # own member, then a public one: fine
        "self._host._raft.hw",  # the host's private member: reported
        "host._clock()",  # reported
        "cls._cache",  # fine
        "type(x).__name__",  # dunder: fine
        "other._log.index",  # reported
        "self.host.raft",  # public all the way: fine
    ])
    assert _private_reaches(snippet, "s.py") == [
        "s.py:2: self._host._raft", "s.py:3: host._clock", "s.py:6: other._log"]


def test_no_private_member_is_reached_across_a_class_in_writers_raft() -> None:
    files = sorted(RAFT.glob("*.py"))
    assert len(files) >= 14, "writers/raft/ was not found"  # guard against reading nothing
    found = [hit for path in files
             for hit in _private_reaches(path.read_text(encoding="utf-8"),
                                         str(path.relative_to(ROOT)))]
    assert found == []

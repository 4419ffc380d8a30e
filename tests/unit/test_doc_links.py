"""Every relative link in README.md and docs/ resolves, and stays inside the repository.

A link is `[text](target)` in markdown prose (code spans and fenced blocks are not links). Its
target, relative to the file that holds it, must name a file or folder of this checkout, never
a path that climbs out of it; a `#fragment` into a markdown file must name one of its headings,
by the anchors GitHub gives them. Links with a scheme (https:, mailto:) are not checked here:
they leave the repository by design. A doc moved or a heading renamed without its links
following fails here, naming the file, the line and the link.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")
CODE_SPAN = re.compile(r"`[^`\n]*`")


def _prose_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) outside fenced and indented code blocks."""
    lines: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line.lstrip()):
            fenced = not fenced
        elif not fenced and not line.startswith("    "):
            lines.append((number, line))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    """Every heading's anchor; a repeated heading gets -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for _, line in _prose_lines(path):
        heading = re.match(r"#{1,6} +(.+?) *#* *$", line)
        if heading is None:
            continue
        base = slug(heading.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return frozenset(found)


@cache
def _links() -> tuple[tuple[Path, int, str], ...]:
    """(file, line, target) of every link, code spans left out."""
    return tuple((path, number, target) for path in DOCS for number, line in _prose_lines(path)
            for target in LINK.findall(CODE_SPAN.sub("``", line)))


def test_slug_matches_githubs_anchors() -> None:
    # written out by hand from GitHub's rendering of such headings
    assert slug("Where it lives (`writers/raft/`)") == "where-it-lives-writersraft"
    assert slug("Kafka 4.x's \"Exceptionally slow controller event\"") == (
        "kafka-4xs-exceptionally-slow-controller-event")
    assert slug("No leaders: every partition leader -1 (issue 18)") == (
        "no-leaders-every-partition-leader--1-issue-18")
    assert slug("The ZooKeeper→KRaft mapping") == "the-zookeeperkraft-mapping"


def test_the_docs_have_links_to_check() -> None:
    # the check below must not pass by finding nothing (e.g. a broken pattern)
    targets = {target for _, _, target in _links()}
    assert "docs/testing.md" in targets or "testing.md" in targets
    assert len(targets) > 30


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves_inside_the_repository(path: Path) -> None:
    broken: list[str] = []
    for source, number, target in _links():
        if source != path or re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue
        file_part, _, fragment = target.partition("#")
        where = f"{source.relative_to(ROOT)}:{number}: {target}"
        resolved = (source.parent / file_part).resolve() if file_part else source
        if not resolved.is_relative_to(ROOT):
            broken.append(f"{where} (outside the repository)")
        elif not resolved.exists():
            broken.append(f"{where} (no such file)")
        elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
            broken.append(f"{where} (no such heading)")
    assert broken == []

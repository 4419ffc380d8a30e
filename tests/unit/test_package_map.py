"""The package map (docs/design/overview.md) matches the tree (issue 20: "the package map
matches the tree").

Every sub-package of `migrate` and `writers` has its row in the map's table, every row names a
folder that exists, and every module of a sub-package is named in its row (as `name` or
`name.py`) or, for a row that points at a section, in that section's paragraph. A module added,
moved or renamed without the map following fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DESIGN = (ROOT / "docs" / "design" / "overview.md").read_text(encoding="utf-8")
ROW = re.compile(r"^\| `((?:migrate|writers)/[a-z_/]+/)` *\|(.*)\|\s*$", re.M)
# rows that say "see ..." name their modules in this section of another part instead
SECTIONS = {"writers/raft/": ("standin.md", "## Where it lives (`writers/raft/`)")}


def _rows() -> dict[str, str]:
    return {m.group(1): m.group(2) for m in ROW.finditer(DESIGN)}


def _sub_packages() -> set[str]:
    return {f"{init.parent.relative_to(ROOT).as_posix()}/"
            for top in ("migrate", "writers") for init in (ROOT / top).rglob("__init__.py")
            if init.parent != ROOT / top}


def _named(text: str, stem: str) -> bool:
    return re.search(rf"`(?:[a-z_/]+/)?{re.escape(stem)}(?:\.py|/)?`", text) is not None


def test_every_sub_package_has_a_row_and_every_row_a_folder() -> None:
    rows = set(_rows())
    assert len(rows) >= 8, "the package map's table was not found"
    assert rows == _sub_packages()


def test_every_module_of_a_sub_package_is_named_in_its_row() -> None:
    rows = _rows()
    unnamed: list[str] = []
    for folder, row in rows.items():
        text = row
        if folder in SECTIONS:
            part, heading = SECTIONS[folder]
            other = (ROOT / "docs" / "design" / part).read_text(encoding="utf-8")
            start = other.index(heading)
            end = other.find("\n## ", start + len(heading))
            text += other[start:end if end != -1 else len(other)]
        for path in sorted((ROOT / folder).iterdir()):
            stem = path.stem if path.suffix == ".py" else path.name
            if stem in {"__init__", "__main__", "__pycache__"}:
                continue
            if (path.suffix == ".py" or (path / "__init__.py").exists()) and not _named(text, stem):
                unnamed.append(f"{folder}{path.name}")
    assert unnamed == []

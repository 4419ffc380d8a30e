"""verify's public surface: `__all__` is exactly what the package exports, and every module keeps
to the layering (rich only in the renderers; no import of `migrate`)."""

from __future__ import annotations

import ast
from pathlib import Path

import verify

VERIFY = Path(verify.__file__).parent


def test_all_equals_public_names() -> None:
    public = {n for n in vars(verify) if not n.startswith("_")}
    modules = {"delta", "errors", "image"}  # submodules appear as attributes once imported
    assert set(verify.__all__) == public - modules
    assert sorted(verify.__all__, key=str) == sorted(set(verify.__all__), key=str)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_layering() -> None:
    for path in VERIFY.glob("*.py"):
        imports = _imports(path)
        assert "migrate" not in imports, path.name
        if "rich" in imports:
            assert path.name.startswith("_render"), path.name

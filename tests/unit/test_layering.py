"""The import graph of the packages keeps the house rules (docs/design/overview.md).

Read from the source with `ast`, nothing imported: every `import` and `from ... import`, at module
level, inside functions and under `TYPE_CHECKING` alike (a lazy import is still an arrow).

- `zkreader` and `writers` are leaves: they import no sibling package. So is `samples`, the
  sample-cluster generator (a tool for the demo, tests and benchmarks), and no package imports it.
- `verify` imports only `writers` and `zkreader` among the siblings.
- Across the packages, imports go only through a package's public surface: its
  `__init__.py`, or a public module directly under it (`writers.errors`, `verify.image`, a
  sub-package's `__init__` such as `writers.codec`). A `_`-prefixed module and any module inside a
  sub-package (`writers.codec.batch`, `migrate.cli.plan`) are that package's own: modules of the
  same top-level package may import them, no other package may.
- No import cycle between modules.
- Every import of ours names a module that exists (mypy runs with `ignore_missing_imports`, so
  a lazy import of a moved module would otherwise pass it and fail only when reached).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("migrate", "samples", "verify", "writers", "zkreader")
ALLOWED_SIBLINGS = {
    "samples": frozenset[str](),
    "zkreader": frozenset[str](),
    "writers": frozenset[str](),
    "verify": frozenset({"writers", "zkreader"}),
    "migrate": frozenset({"verify", "writers", "zkreader"}),
}


@dataclass(frozen=True)
class Arrow:
    """One import: `source` (a module) takes something from `target` (a module) at `line`."""

    source: str
    target: str
    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.source} imports {self.target}"


def _module_files() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


MODULES = _module_files()


def _resolve(name: str) -> str | None:
    """The module of ours that `name` (a module or a name in one) lives in, or None."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name if name in MODULES else None


def _arrows(module: str, path: Path) -> Iterator[Arrow]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    rel = str(path.relative_to(ROOT))
    here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)]
                origin = ".".join([*base, *([node.module] if node.module else [])])
            else:
                origin = node.module or ""
            # `from pkg import _mod` names a module; `from pkg import Name` names the package.
            names = [f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in MODULES else origin
                     for alias in node.names]
        for name in names:
            target = _resolve(name)
            if target is not None and target != module:
                yield Arrow(module, target, rel, node.lineno)


ARROWS = list(dict.fromkeys(arrow for module, path in MODULES.items()
                            for arrow in _arrows(module, path)))


def _package(module: str) -> str:
    return module.split(".", 1)[0]


def _is_private(module: str) -> bool:
    """Inside its package: `_`-named anywhere, or deeper than a package's direct children."""
    parts = module.split(".")
    return len(parts) > 2 or any(part.startswith("_") for part in parts[1:])


def test_the_graph_is_read() -> None:
    """A guard against a reader that finds nothing: known arrows of each kind are present."""
    pairs = {(a.source, a.target) for a in ARROWS}
    assert ("migrate.cli.app", "migrate.cli.exit_codes") in pairs
    assert ("verify", "verify.image") in pairs
    assert any(_package(s) == "migrate" and _package(t) == "zkreader" for s, t in pairs)
    assert any(_package(s) == "verify" and _package(t) == "writers" for s, t in pairs)
    assert ("writers", "writers.codec.batch") in pairs
    assert len(MODULES) > 100


def _imported_modules_of_ours(path: Path) -> Iterator[tuple[str, int]]:
    """Each absolute `import X` / `from X import ...` whose X starts with one of the packages."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module, node.lineno


def test_every_import_of_ours_names_a_module_that_exists() -> None:
    missing = [f"{path.relative_to(ROOT)}:{line}: {name}"
               for path in MODULES.values()
               for name, line in _imported_modules_of_ours(path)
               if name.split(".", 1)[0] in PACKAGES and name not in MODULES]
    assert missing == []


def test_a_missing_module_is_seen(tmp_path: Path) -> None:
    """The check above finds a `from` import of a module that is not in the tree."""
    probe = tmp_path / "probe.py"
    probe.write_text("import os\nfrom migrate.entities import delta_records\n", encoding="utf-8")
    assert list(_imported_modules_of_ours(probe)) == [("os", 1), ("migrate.entities", 2)]
    assert "migrate.entities" not in MODULES


def test_private_means_inside_its_package() -> None:
    """The rule itself, on names: the public surface is a package and its direct public children."""
    assert not _is_private("writers")
    assert not _is_private("writers.errors")
    assert not _is_private("writers.codec")
    assert _is_private("writers._faults")
    assert _is_private("writers.codec.batch")
    assert _is_private("migrate.cli.plan")


def test_packages_import_only_the_packages_below_them() -> None:
    wrong = [str(a) for a in ARROWS
             if _package(a.target) != _package(a.source)
             and _package(a.target) not in ALLOWED_SIBLINGS[_package(a.source)]]
    assert wrong == []


def test_no_module_imports_another_packages_private_module() -> None:
    wrong = [str(a) for a in ARROWS
             if _package(a.target) != _package(a.source) and _is_private(a.target)]
    assert wrong == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_cycle_finder_finds_a_cycle() -> None:
    """The finder itself, on a hand-made graph: a-b-c loop, d hanging off it, e alone."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"d"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_between_modules() -> None:
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for arrow in ARROWS:
        graph[arrow.source].add(arrow.target)
    assert _cycles(graph) == []

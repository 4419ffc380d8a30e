"""The window's parts in the terminal: one stacked bar, then a legend with each part's figure.

Each part has its own colour and its own fill character, so the bar still reads on a console
without colour (a log file, a CI job). Parts that could not be measured are listed with their
reason and take no room in the bar. A part split further (the stand-in's election, with the new
leader's log) lists its sub-parts under it, indented, with their start in the window.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from verify._window import WindowPart, WindowParts

__all__ = ["render_window_parts"]

_STYLE = {"tool": ("█", "green"), "migration_znode": ("▓", "cyan"), "election": ("▒", "blue"),
          "kafka_claim": ("░", "magenta"), "reconcile": ("▚", "yellow"),
          "broker_rpcs": ("■", "red")}


def render_window_parts(console: Console, parts: WindowParts, *, width: int = 60) -> None:
    """Print the stacked bar (scaled to the measured parts' sum) and the legend.

    Args:
        console: where to print (tests pass a fixed-width, colourless console).
        parts: the window's parts.
        width: the bar's width in cells.
    """
    stacked = parts.stacked()
    whole = sum(p.ms for p, _ in stacked if p.ms is not None)
    bar = Text("  ")
    if whole > 0:
        used = 0
        for i, (p, start) in enumerate(stacked):
            assert p.ms is not None
            end = width if i == len(stacked) - 1 else round((start + p.ms) / whole * width)
            cells = max(end - used, 1 if p.ms > 0 else 0)
            char, style = _STYLE.get(p.name, ("#", "white"))
            bar.append(char * cells, style=style)
            used += cells
    console.print(Text(f"window parts, stacked ({whole:.1f} ms measured):"))
    if whole > 0:
        console.print(bar)
    table = Table(show_header=True, box=None, pad_edge=False, padding=(0, 1))
    for col, justify in (("", "left"), ("part", "left"), ("ms", "right"),
                         ("starts at", "right"), ("source", "left"), ("what / why not", "left")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    starts = {p.name: start for p, start in stacked}
    for p in parts.parts:
        char, style = _STYLE.get(p.name, ("#", "white"))
        if p.ms is None:
            table.add_row(Text(" "), p.name, "n/a", "", p.source, Text(p.reason or "",
                                                                       style="dim"))
        else:
            table.add_row(Text(char, style=style), p.name, f"{p.ms:.1f}",
                          f"{starts[p.name]:.1f}", p.source, p.what)
        _sub_rows(table, p, starts.get(p.name))
    console.print(table)


def _sub_rows(table: Table, p: WindowPart, start: float | None) -> None:
    """A split part's sub-parts, indented under it (or why it could not be split)."""
    if p.parts_reason is not None:
        table.add_row(Text(" "), "  split", "n/a", "", "", Text(p.parts_reason, style="dim"))
    for sub, at in p.stacked():
        assert sub.ms is not None
        table.add_row(Text(" "), f"  {sub.name}", f"{sub.ms:.1f}",
                      "" if start is None else f"{start + at:.1f}", sub.source, sub.what)

"""README.md and docs/ name plan's printed steps as plan prints them.

docs/runbooks/ is `plan --json`'s `operator_sequence` for the sample cluster, rendered
(tests/integration/test_runbooks.py regenerates it from real ZooKeeper and compares), so the
runbooks stand for plan's text here and this test needs no ZooKeeper. README.md restates no
sequence: it links the runbooks, and must not number steps of its own. Every "step N" in
the design (docs/design.md and its parts in docs/design/) names a step of the stand-in path's
sequence and every one is listed below with what that step must hold (written by hand, from the
issue-16 rehearsals: zk2kraft started before the controllers, the cutover by `kill -USR1`); a
new reference fails until it is listed, so none goes stale when steps move. docs/commands.md's
offline section numbers its own five parts; its start order (controllers, then brokers) is
checked against the offline runbooks' Start step.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNBOOKS = ROOT / "docs" / "runbooks"


def _flat(path: Path) -> str:
    return " ".join(path.read_text().split())


def _design() -> str:
    """The design's index and every part, as one text (a reference may sit in any part)."""
    parts = [ROOT / "docs" / "design.md", *sorted((ROOT / "docs" / "design").glob("*.md"))]
    return " ".join(_flat(part) for part in parts)


def _steps(runbook: str) -> dict[int, tuple[str, list[str]]]:
    """Step number -> (title, its action lines in order) of a rendered runbook."""
    steps: dict[int, tuple[str, list[str]]] = {}
    current: int | None = None
    for line in (RUNBOOKS / runbook).read_text().splitlines():
        heading = re.match(r"### (\d+)\. (.+)", line)
        if heading:
            current = int(heading.group(1))
            steps[current] = (heading.group(2), [])
        elif line.startswith("## "):
            current = None
        elif current is not None and line.startswith("- "):
            steps[current][1].append(line)
    return steps


def _index(actions: list[str], needle: str) -> int:
    found = [i for i, a in enumerate(actions) if needle in a]
    assert found, f"no action with {needle!r} in {actions}"
    return found[0]


# each "step N" of the design (whitespace collapsed), with the stand-in step it means
DESIGN_REFERENCES = {
    "step 3's printed command passes no `--controller-config`": 3,
    "step 3's `migrate` command and its order": 3,
    "step 4's `kill -USR1` and `verify` check": 4,
    "a controller formatted as step 3 says": 3,
    "the reverse of the printed step 3": 3,
    "it now names step 3's order": 3,
    "(the printed step 3's order)": 3,
}


def test_the_standin_steps_design_md_names_are_plans() -> None:
    design = _design()
    found = [m.start() for m in re.finditer(r"\bstep \d+\b", design)]
    listed = {design.find(phrase) + phrase.index("step ") for phrase in DESIGN_REFERENCES}
    unlisted = [design[max(0, i - 60):i + 40] for i in found if i not in listed]
    assert not unlisted, f"the design names a step this test does not check: {unlisted}"
    steps = _steps("online-standin.md")
    for phrase, number in DESIGN_REFERENCES.items():
        assert phrase in design, f"the design no longer says {phrase!r}: update this test"
        assert int(re.search(r"step (\d+)", phrase).group(1)) == number  # type: ignore[union-attr]
    # step 3: the format command, then zk2kraft migrate (no --controller-config), then the
    # controllers (issue 16: the other order was refused every time)
    title, actions = steps[3]
    assert title == "Provision the controllers and start zk2kraft's stand-in"
    fmt = _index(actions, "kafka-storage.sh format")
    command = _index(actions, "zk2kraft migrate")
    controllers = _index(actions, "start controllers 3001, 3002")
    assert fmt < command < controllers, actions
    assert "--controller-config" not in actions[command]
    # step 4: the cutover by signal, then verify's check
    title, actions = steps[4]
    assert title == "Cut over"
    assert _index(actions, "kill -USR1") < _index(actions, "zk2kraft verify"), actions


def test_readme_numbers_no_steps_of_its_own() -> None:
    readme = _flat(ROOT / "README.md")
    assert not re.findall(r"\bsteps? \d+\b", readme, re.IGNORECASE), (
        "README.md names plan's steps: link the runbook (docs/runbooks/) instead")
    assert not re.search(r"^#+ *\d+\.", (ROOT / "README.md").read_text(), re.MULTILINE)


def test_commands_md_offline_start_order_is_the_runbooks() -> None:
    commands = _flat(ROOT / "docs" / "commands.md")
    start = commands.index("**3. Start order.**")
    part = commands[start:commands.index("**4. What to check.**")]
    assert part.index("Start all controllers") < part.index("Then the brokers, all at once")
    assert "copy the data directories before step 3" in commands  # its own part 3, the start
    assert len(re.findall(r"\bstep \d+\b", commands)) == 1, "a new step reference: check it here"
    for runbook in ("offline-3.9.md", "offline-4.x.md"):
        start_steps = [(t, a) for t, a in _steps(runbook).values() if t == "Start"]
        assert len(start_steps) == 1, runbook
        actions = start_steps[0][1]
        assert _index(actions, "start every controller") < _index(
            actions, "start every broker at once"), actions

"""The online run's state machine: every (from, to) pair of phases against a hand-written table,
and the phase as the journal persists and resumes it (journals of the form written before the
enum existed included)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from migrate.online.journal import Journal
from migrate.online.phases import IllegalTransitionError, Phase, check_transition

# The strings journals have always held, in the run's order (docs/design/online-run.md, "Journal
# and resume").
OLD_STRINGS = ("precopy", "mirror", "fencing", "fenced", "drained", "migration", "handoff", "done")

# Written out by hand from the run's steps (docs/design/online-run.md), not read from the code
# under test.
LEGAL = {
    ("precopy", "mirror"),  # pre-copy durable
    ("mirror", "fencing"),  # claim journaled before the fence is sent
    ("mirror", "mirror"),  # a re-run at mirror with earlier claims reads back "not applied"
    ("mirror", "fenced"),  # ... or reads back that one of them applied
    ("fencing", "drained"),  # this run's own fence: nothing journaled inside the window
    ("fencing", "mirror"),  # read back: the fence did not apply
    ("fencing", "fenced"),  # read back: it applied (or our earlier claim holds /controller)
    ("fenced", "drained"),  # final append durable
    ("drained", "migration"),  # a stand-in re-run that cannot lead writes /migration
    ("drained", "handoff"),  # /migration written and the handoff begun, in one save
    ("migration", "handoff"),
    ("handoff", "handoff"),  # a re-run resumed inside the handoff
    ("handoff", "done"),
}

PAIRS = list(itertools.product(OLD_STRINGS, repeat=2))


def test_the_phases_are_the_journals_strings_in_order() -> None:
    assert tuple(p.value for p in Phase) == OLD_STRINGS


@pytest.mark.parametrize(("current", "target"), PAIRS, ids=[f"{a}->{b}" for a, b in PAIRS])
def test_every_pair_is_legal_exactly_when_the_table_says(current: str, target: str) -> None:
    if (current, target) in LEGAL:
        check_transition(Phase(current), Phase(target))
    else:
        with pytest.raises(IllegalTransitionError,
                           match=f"illegal phase transition {current} -> {target}"):
            check_transition(Phase(current), Phase(target))


def test_reached_follows_the_runs_order() -> None:
    assert Phase.FENCING.reached(Phase.MIRROR)
    assert Phase.FENCED.reached(Phase.FENCED)
    assert not Phase.FENCING.reached(Phase.FENCED)
    assert not Phase.PRECOPY.reached(Phase.MIRROR)
    assert Phase.DONE.reached(Phase.PRECOPY)


def _old_form(phase: str) -> dict[str, object]:
    """A journal as the run wrote it before the enum (main at 11b560c), field for field."""
    return {"phase": phase, "cluster_id": "MkU3OEVBNTcwNTJENDM2Qg", "voters": [3000, 3001, 3002],
            "leader_epoch": 1, "last_durable_offset": 41,
            "claim": '{"version":2,"brokerid":3000,"timestamp":"1700000000001",'
                     '"kraftControllerEpoch":1}',
            "claims": ['{"version":2,"brokerid":3000,"timestamp":"1700000000001",'
                       '"kraftControllerEpoch":1}'],
            "fence": {"controller_epoch": 7, "epoch_zk_version": 6, "migration_zk_version": 2},
            "migration_zk_version": None, "facts": {}}


@pytest.mark.parametrize("phase", OLD_STRINGS)
def test_a_journal_of_the_old_form_loads_in_its_phase(tmp_path: Path, phase: str) -> None:
    (tmp_path / "journal.json").write_text(json.dumps(_old_form(phase), indent=2))
    loaded = Journal.load(tmp_path)
    assert loaded is not None
    assert loaded.phase is Phase(phase)
    assert loaded.voters == [3000, 3001, 3002] and loaded.last_durable_offset == 41


def test_an_old_journal_resumes_and_the_file_keeps_the_old_strings(tmp_path: Path) -> None:
    (tmp_path / "journal.json").write_text(json.dumps(_old_form("fencing"), indent=2))
    j = Journal.load(tmp_path)
    assert j is not None
    j.enter(Phase.FENCED, fence={"controller_epoch": 7})  # the read-back found it applied
    j.enter(Phase.DRAINED, last_durable_offset=44)
    doc = json.loads((tmp_path / "journal.json").read_text())
    assert doc["phase"] == "drained"
    assert doc["last_durable_offset"] == 44
    assert set(doc) == set(_old_form("x"))  # the same fields as before
    again = Journal.load(tmp_path)
    assert again is not None and again.phase is Phase.DRAINED


def test_an_illegal_change_raises_and_saves_nothing(tmp_path: Path) -> None:
    (tmp_path / "journal.json").write_text(json.dumps(_old_form("mirror")))
    j = Journal.load(tmp_path)
    assert j is not None
    before = (tmp_path / "journal.json").read_bytes()
    with pytest.raises(IllegalTransitionError, match="mirror -> drained"):
        j.enter(Phase.DRAINED)
    with pytest.raises(IllegalTransitionError, match="Journal.enter"):
        j.save(phase=Phase.DRAINED)
    assert j.phase is Phase.MIRROR
    assert (tmp_path / "journal.json").read_bytes() == before


def test_an_unknown_phase_is_not_a_journal(tmp_path: Path) -> None:
    (tmp_path / "journal.json").write_text(json.dumps(_old_form("fenceing")))
    with pytest.raises(ValueError, match="not a zk2kraft journal \\(unknown phase 'fenceing'\\)"):
        Journal.load(tmp_path)

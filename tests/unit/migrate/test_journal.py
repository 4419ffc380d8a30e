"""The journal keeps every `/controller` claim a run of the migration sent at `fencing`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from migrate.errors import BadFlagError
from migrate.online.journal import Journal, check_journal_dir
from migrate.online.phases import Phase

C1 = '{"version":2,"brokerid":3000,"timestamp":"1700000000001","kraftControllerEpoch":1}'
C2 = '{"version":2,"brokerid":3000,"timestamp":"1700000000002","kraftControllerEpoch":1}'


def test_every_claim_survives_a_reload_and_a_not_applied_read_back(tmp_path: Path) -> None:
    j = Journal(tmp_path, phase=Phase.MIRROR, cluster_id="c", voters=[3000])
    j.enter(Phase.FENCING, **j.claim_changes(C1))
    j.enter(Phase.MIRROR, claim=None)  # a re-run read back "not applied"
    j.enter(Phase.FENCING, **j.claim_changes(C2))
    loaded = Journal.load(tmp_path)
    assert loaded is not None
    assert loaded.phase == "fencing"
    assert loaded.claim == C2
    assert loaded.claims == [C1, C2]


def test_a_journal_written_before_the_list_keeps_its_one_claim(tmp_path: Path) -> None:
    doc = {"phase": "fencing", "cluster_id": "c", "voters": [3000], "leader_epoch": 1,
           "last_durable_offset": 9, "claim": C1, "fence": None,
           "migration_zk_version": None, "facts": {}}
    (tmp_path / "journal.json").write_text(json.dumps(doc))
    loaded = Journal.load(tmp_path)
    assert loaded is not None and loaded.claims == [C1]


def test_claims_that_are_not_strings_are_not_a_journal(tmp_path: Path) -> None:
    doc = {"phase": "fencing", "cluster_id": "c", "voters": [3000], "leader_epoch": 1,
           "last_durable_offset": 9, "claim": C1, "claims": [1], "facts": {}}
    (tmp_path / "journal.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="journal.json: not a zk2kraft journal"):
        Journal.load(tmp_path)


def test_journal_dir_checks_refuse_what_cannot_hold_a_journal(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(BadFlagError, match=r"--journal .*/file/sub: .*/file is not a directory"):
        check_journal_dir(tmp_path / "file" / "sub", "--journal")
    (tmp_path / "j" / "journal.json").mkdir(parents=True)
    with pytest.raises(BadFlagError, match=r"journal.json is not a file"):
        check_journal_dir(tmp_path / "j", "--journal")
    check_journal_dir(tmp_path / "new" / "deeper", "--journal")  # created later, by save
    assert not (tmp_path / "new").exists()  # the probe left nothing behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "j"]


def test_a_journal_dir_is_created_0700(tmp_path: Path) -> None:
    Journal(tmp_path / "jd", cluster_id="c", voters=[3000]).save()
    assert (tmp_path / "jd").stat().st_mode & 0o777 == 0o700

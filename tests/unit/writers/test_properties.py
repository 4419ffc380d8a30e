"""`parse_properties`: the one reader of Java `.properties` text (meta.properties, client and
controller configs). Expectations are Java's `Properties.load` rules, written by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from writers import parse_properties, read_meta_properties
from writers.errors import VoterFileFormatError


def test_separators_comments_and_whitespace() -> None:
    text = ("# a comment\n! another\n\n  node.id=3000  \ncluster.id: abc\n"
            "process.roles controller\nlisteners =CONTROLLER://:9093\n")
    assert parse_properties(text) == {
        "node.id": "3000",
        "cluster.id": "abc",
        "process.roles": "controller",
        "listeners": "CONTROLLER://:9093",
    }


def test_continuation_joins_lines_and_a_bare_key_is_empty() -> None:
    text = "sasl.jaas.config=org.Module required \\\n    username=\"u\";\nstandalone\n"
    assert parse_properties(text) == {
        "sasl.jaas.config": 'org.Module required username="u";',
        "standalone": "",
    }


def test_an_escaped_backslash_at_the_end_is_not_a_continuation() -> None:
    assert parse_properties("path=C:\\\\\nnext=1\n") == {"path": "C:\\\\", "next": "1"}


@pytest.mark.parametrize(("text", "problem"), [
    ("version=1\ncluster.id=abc\nnode.id\n", "node.id='' is not an integer"),
    ("version=1\ncluster.id\nnode.id=1\n", "cluster.id and node.id are required"),
])
def test_meta_properties_with_a_bare_key_is_refused_naming_it(
    tmp_path: Path, text: str, problem: str
) -> None:
    (tmp_path / "meta.properties").write_text(text)
    with pytest.raises(VoterFileFormatError, match=problem):
        read_meta_properties(tmp_path)

"""`plan --fleet`'s Spark master: `local[*]` means 4 task slots a core, at most one a cluster
(the tasks wait on their ZooKeepers, not on a core); any other master is used as given."""

from __future__ import annotations

import pytest

from migrate.fleet.job import fleet_master


@pytest.mark.parametrize(("master", "clusters", "cores", "expected"), [
    ("local[*]", 20, 2, "local[8]"),
    ("local[*]", 3, 2, "local[3]"),
    ("local[*]", 1, 16, "local[1]"),
    ("local[2]", 20, 2, "local[2]"),
    ("spark://m:7077", 20, 2, "spark://m:7077"),
])
def test_fleet_master(master: str, clusters: int, cores: int, expected: str) -> None:
    assert fleet_master(master, clusters, cores) == expected

"""The tests' port chooser (tests/support/ports.py): scripts/test.sh runs two pytest processes
at once, each with its own ZK2KRAFT_TEST_PORT_SHARE; each must get ports, never the other's."""

from __future__ import annotations

import pytest

from tests.support import ports


@pytest.mark.parametrize("share", ["0/2", "1/2"])
def test_each_share_of_two_gets_ports_and_only_its_own(
        share: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ports.SHARE_ENV, share)
    got = ports.free_ports(30)
    assert len(set(got)) == 30
    k = int(share[0])
    # the rule written in the module: (port // 2) % 2 == K (Linux gives bind(0) odd ports)
    assert all((p // 2) % 2 == k for p in got), got


def test_a_port_is_never_handed_out_twice_in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ports.SHARE_ENV, raising=False)
    first = set(ports.free_ports(20))
    assert first.isdisjoint(ports.free_port() for _ in range(20))


@pytest.mark.parametrize("bad", ["2/2", "x/2", "1", "0/0"])
def test_a_malformed_share_is_refused_naming_the_variable(
        bad: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ports.SHARE_ENV, bad)
    with pytest.raises(ValueError, match=ports.SHARE_ENV):
        ports.free_port()

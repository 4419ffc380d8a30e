"""Entity keys of notified lists (zkreader's part of the per-entity mapping, issue 8).

A child notification on a list znode means an entity was created or removed there; which
children are entities, and which deeper lists must be read, is written out here by hand from
Kafka's tree (`ZkData.scala`).
"""

from __future__ import annotations

import pytest

from zkreader import EntityKey
from zkreader._entities import _is_list, _list_children_keys


@pytest.mark.parametrize(("path", "is_list"), [
    ("/brokers/ids", True), ("/brokers/topics", True), ("/admin/delete_topics", True),
    ("/config/topics", True), ("/config/users", True), ("/config/users/u/clients", True),
    ("/config/ips", True), ("/kafka-acl", True), ("/kafka-acl/Topic", True),
    ("/kafka-acl-extended", True), ("/kafka-acl-extended/prefixed", True),
    ("/kafka-acl-extended/prefixed/Group", True), ("/delegation_token/tokens", True),
    ("/brokers/topics/t", False), ("/config/users/u", False), ("/kafka-acl/Topic/x", False),
    ("/controller", False), ("/config/changes", False),
])
def test_which_znodes_are_entity_lists(path: str, is_list: bool) -> None:
    assert _is_list(path) is is_list


def test_children_of_lists_are_entities_or_deeper_lists() -> None:
    assert _list_children_keys("/brokers/topics", ["a", "b"]) == (
        [EntityKey("topic", "a"), EntityKey("topic", "b")], [])
    assert _list_children_keys("/admin/delete_topics", ["a"]) == ([EntityKey("topic", "a")], [])
    assert _list_children_keys("/brokers/ids", ["1", "x"]) == ([EntityKey("broker", "1")], [])
    # a new user: its quota entity, and its per-client list to read (and watch) too
    assert _list_children_keys("/config/users", ["a%40b"]) == (
        [EntityKey("client_quota", "users/a%40b")], ["/config/users/a%40b/clients"])
    assert _list_children_keys("/config/users/a/clients", ["c"]) == (
        [EntityKey("client_quota", "users/a/clients/c")], [])
    # ACL stores: type lists first, then resources
    assert _list_children_keys("/kafka-acl", ["Topic", "Bogus"]) == ([], ["/kafka-acl/Topic"])
    assert _list_children_keys("/kafka-acl/Group", ["g"]) == (
        [EntityKey("acl", "LITERAL/Group/g")], [])
    assert _list_children_keys("/kafka-acl-extended", ["prefixed"]) == (
        [], ["/kafka-acl-extended/prefixed"])
    assert _list_children_keys("/kafka-acl-extended/prefixed", ["User"]) == (
        [], ["/kafka-acl-extended/prefixed/User"])
    assert _list_children_keys("/kafka-acl-extended/prefixed/User", ["User:al"]) == (
        [EntityKey("acl", "PREFIXED/User/User:al")], [])


def test_a_filter_drops_children_before_their_keys_but_not_their_deeper_lists() -> None:
    watched = {"/brokers/topics/a", "/config/users/old"}

    def new_only(paths: list[str]) -> list[str]:
        return [p for p in paths if p not in watched]

    assert _list_children_keys("/brokers/topics", ["a", "b"], new_only) == (
        [EntityKey("topic", "b")], [])
    # a watched user is not re-read, but its clients list is listed as before
    assert _list_children_keys("/config/users", ["old", "new"], new_only) == (
        [EntityKey("client_quota", "users/new")],
        ["/config/users/old/clients", "/config/users/new/clients"])

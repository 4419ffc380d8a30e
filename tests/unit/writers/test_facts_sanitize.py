"""Kafka's Sanitizer (URLEncoder/URLDecoder based) as used for quota, SCRAM and token names."""

from __future__ import annotations

import pytest

from writers import desanitize, sanitize


@pytest.mark.parametrize(
    ("name", "stored"),
    [
        ("alice@example.com", "alice%40example.com"),
        ("User:alice", "User%3Aalice"),
        ("a b", "a%20b"),  # URLEncoder's '+' becomes %20
        ("a*b", "a%2Ab"),  # URLEncoder keeps '*'; Sanitizer escapes it
        ("x~y", "x%7Ey"),  # Java escapes '~' (Python's quote would not)
        ("a.b-c_d", "a.b-c_d"),
        ("grüße/€", "gr%C3%BC%C3%9Fe%2F%E2%82%AC"),
        ("<default>", "%3Cdefault%3E"),
    ],
)
def test_sanitize_matches_kafka_and_round_trips(name: str, stored: str) -> None:
    assert sanitize(name) == stored
    assert desanitize(stored) == name


def test_desanitize_is_java_urldecoder() -> None:
    assert desanitize("a+b") == "a b"  # URLDecoder turns '+' into a space
    assert desanitize("alice%40example.com") == "alice@example.com"
    assert desanitize("lower%3aok") == "lower:ok"
    assert desanitize("plain") == "plain"


@pytest.mark.parametrize("bad", ["50%", "a%4", "a%zzb", "%C3"])
def test_malformed_escapes_are_rejected_not_passed_through(bad: str) -> None:
    with pytest.raises(ValueError):
        desanitize(bad)

"""Decoding Kafka's encrypted dynamic broker passwords, against values encrypted by Java's JCE."""

from __future__ import annotations

import pytest

from migrate.translate.password import (
    PasswordDecodeError,
    decode_password,
    encode_password,
    is_password_config,
)

SECRET = "enc-secret-1"
# Produced by a small Java 17 program with javax.crypto and Kafka's EncryptingPasswordEncoder
# parameters (random 256-byte salt, PBKDF2WithHmacSHA512, 4096 iterations, 128-bit AES key).
JAVA_CBC = (
    "keyFactoryAlgorithm:PBKDF2WithHmacSHA512,cipherAlgorithm:AES/CBC/PKCS5Padding,keyLength:128,"
    "salt:RcGR82cRRQDhxpAJXVHHvhDs6Kz+iTG0avi0p8h1CxZN4SWQ9qGWaguG9/WElFvfYi7vl78pIuPAG4KJUPF/Gha"
    "B2GpTKs32+axgXjKn8oh7xZeJ19HvvwgoPRvyL5f8mWJENORaYNAtbb9Y7BUkU8uPFz+G+VMLyAmp42jEYOblSpLMlmm"
    "Z/sVbJgl4c9CTY6ndYZvpY9alFjpqPT3dCyvpatoT6upCAp2jUieXJCIHtUeAZtWkaveMKPyUjgxfW6FSwcIiYzsTJM6"
    "4FS8TcUc4ddy9sJ8IdozhbLUhcass9xcumqvbilG7EB3HLt3i2+mwi1OKJ5jeUZUnO+hiZA==,iterations:4096,"
    "encryptedPassword:lIF2oPqXcmcsuLKWthDoUSTtKEMd1RcrxRiz5oep0pE=,passwordLength:18,"
    "initializationVector:bBNYNlNMoVEcJBk4IFet/g=="
)
JAVA_GCM = (
    "keyFactoryAlgorithm:PBKDF2WithHmacSHA512,cipherAlgorithm:AES/GCM/NoPadding,keyLength:128,"
    "salt:nKRJELhVkChi28kjhENvQMr1YcnizbIM9LtGLSTGe0D4m0chbjK/8EdualuCS+fIPJsTf3HBw5ZZA//jkR3Rub"
    "Txh33U2uGPFLclfQSaCDbDm8DWCc5fK+KNyuVzvte0vc2w1ZxDChDEW/WzvajqRrUuYWa6Dp57h/0Il+gRwS8hCTKjm"
    "tHvtnl/lzwZ7XrG3Iq6KxaCjqCBWbSlLAtAlfFjS5QBW9nw+P0y9g19ABRS+g5Q4NV8pgXL0SY7S3b2xQXaMgiZjUxH"
    "MphjihDDx8rbX/Dbx/pjRwJ+OywcbviV3TXbIA07IOrqFqPvO1bKBb44wHoBW2GqwzqmzjQoLg==,iterations:4096,"
    "encryptedPassword:nVzMqNwY/Tzqz8HLQG78T1F1AIHozw==,passwordLength:6,"
    "initializationVector:uKA0AWTbdM0GHDYK,authenticationTagLength:128"
)


def test_decodes_java_cbc_value() -> None:
    assert decode_password(JAVA_CBC, SECRET) == "keystore-pässwörd€"


def test_decodes_java_gcm_value() -> None:
    assert decode_password(JAVA_GCM, SECRET) == "gcm-pw"


def test_whitespace_and_key_order_do_not_matter() -> None:
    shuffled = " , ".join(reversed(JAVA_CBC.split(",")))
    assert decode_password(shuffled, SECRET) == "keystore-pässwörd€"


@pytest.mark.parametrize("value", [JAVA_CBC, JAVA_GCM])
def test_wrong_secret_fails_without_leaking(value: str) -> None:
    with pytest.raises(PasswordDecodeError) as info:
        decode_password(value, "wrong-secret")
    assert "wrong-secret" not in str(info.value)
    assert "lIF2oP" not in str(info.value)


def test_length_sanity_check_is_in_utf16_units() -> None:
    # passwordLength counts UTF-16 units (Java's String.length()): 18 for this value
    tampered = JAVA_CBC.replace("passwordLength:18", "passwordLength:21")
    with pytest.raises(PasswordDecodeError, match="length"):
        decode_password(tampered, SECRET)


@pytest.mark.parametrize(
    "value",
    ["plaintext-password", "salt:@@@,iterations:1", JAVA_CBC.replace("AES/CBC", "DES/CBC")],
)
def test_values_not_in_encoded_form_fail(value: str) -> None:
    with pytest.raises(PasswordDecodeError):
        decode_password(value, SECRET)


def test_encode_round_trip_with_astral_characters() -> None:
    encoded = encode_password("p€ss😀", "s3cret", salt=b"\x01" * 256, iv=b"\x02" * 16)
    assert "passwordLength:6" in encoded  # 😀 is two UTF-16 units
    assert decode_password(encoded, "s3cret") == "p€ss😀"
    assert encode_password("p€ss😀", "s3cret", salt=b"\x01" * 256, iv=b"\x02" * 16) == encoded


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("ssl.keystore.password", True),
        ("listener.name.internal.ssl.key.password", True),
        ("listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config", True),
        ("ssl.truststore.password", True),
        ("ssl.keystore.key", True),
        ("ssl.keystore.location", False),
        ("sasl.enabled.mechanisms", False),
        ("log.retention.ms", False),
    ],
)
def test_password_configs_are_recognised_by_suffix(name: str, secret: bool) -> None:
    assert is_password_config(name) is secret

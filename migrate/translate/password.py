"""Decoding of the encrypted dynamic broker passwords ZK-mode Kafka keeps in `/config/brokers`.

A dynamic broker config of Kafka's PASSWORD type (`ssl.keystore.password`,
`listener.name.x.ssl.key.password`, `listener.name.x.plain.sasl.jaas.config`, ...) is stored
encrypted with the brokers' `password.encoder.secret` (Kafka's `EncryptingPasswordEncoder`) as a
comma-separated `key:value` list: `keyFactoryAlgorithm` (default PBKDF2WithHmacSHA512),
`cipherAlgorithm` (default AES/CBC/PKCS5Padding), `keyLength` (bits, default 128), `iterations`
(default 4096), `salt`, `initializationVector` (and `authenticationTagLength` for GCM),
`encryptedPassword` (standard base64) and `passwordLength` (UTF-16 length, a sanity check).

KRaft stores these configs in clear in the metadata log (it has no encoder), so the migration
must decode them: Kafka 3.4 copied the ciphertext instead and every such broker config became
unusable (KAFKA-14801, fixed in 3.5.0). Here, a value we cannot decode is an error the translator
turns into a blocker; it is never copied. Nothing in this module logs or formats a secret, a
ciphertext or a decoded password.
"""

from __future__ import annotations

import base64
import binascii
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

__all__ = [
    "PasswordDecodeError",
    "decode_password",
    "encode_password",
    "is_password_config",
]

# Kafka's DynamicBrokerConfig.DynamicPasswordConfigs (3.9): every dynamic broker config whose
# ConfigDef type is PASSWORD. `isPasswordConfig` matches by suffix, which covers the
# listener-prefixed forms (`listener.name.<l>.ssl.key.password`,
# `listener.name.<l>.<mechanism>.sasl.jaas.config`).
_PASSWORD_CONFIG_SUFFIXES = (
    "ssl.key.password",
    "ssl.keystore.password",
    "ssl.keystore.key",
    "ssl.keystore.certificate.chain",
    "ssl.truststore.password",
    "ssl.truststore.certificates",
    "sasl.jaas.config",
)

_KDF_HASHES: dict[str, type[hashes.HashAlgorithm]] = {
    "PBKDF2WithHmacSHA512": hashes.SHA512,
    "PBKDF2WithHmacSHA384": hashes.SHA384,
    "PBKDF2WithHmacSHA256": hashes.SHA256,
    "PBKDF2WithHmacSHA224": hashes.SHA224,
    "PBKDF2WithHmacSHA1": hashes.SHA1,
}
_DEFAULT_KDF = "PBKDF2WithHmacSHA512"
_DEFAULT_CIPHER = "AES/CBC/PKCS5Padding"


class PasswordDecodeError(ValueError):
    """An encoded password could not be decoded; the message never holds a secret."""


def is_password_config(name: str) -> bool:
    """True when `name` is a PASSWORD-type dynamic broker config (Kafka's `isPasswordConfig`).

    Args:
        name: a broker config key, possibly listener-prefixed.
    """
    return name.endswith(_PASSWORD_CONFIG_SUFFIXES)


def _parse(encoded: str) -> dict[str, str]:
    """Kafka's `Csv.parseCsvMap`: split on commas, each entry on its last colon, trim."""
    params: dict[str, str] = {}
    for entry in encoded.split(","):
        key, sep, value = entry.strip().rpartition(":")
        if not sep:
            raise PasswordDecodeError("not in Kafka's encoded-password form (key:value list)")
        params[key.strip()] = value.strip()
    return params


def _b64(params: dict[str, str], key: str) -> bytes:
    try:
        return base64.b64decode(params[key], validate=True)
    except KeyError:
        raise PasswordDecodeError(f"encoded password has no {key!r}") from None
    except (binascii.Error, ValueError):
        raise PasswordDecodeError(f"encoded password's {key!r} is not base64") from None


def _int(params: dict[str, str], key: str) -> int:
    try:
        return int(params[key])
    except KeyError:
        raise PasswordDecodeError(f"encoded password has no {key!r}") from None
    except ValueError:
        raise PasswordDecodeError(f"encoded password's {key!r} is not an integer") from None


def _derive_key(secret: str, kdf_name: str, salt: bytes, iterations: int, bits: int) -> bytes:
    digest = _KDF_HASHES.get(kdf_name)
    if digest is None:
        raise PasswordDecodeError(f"unsupported keyFactoryAlgorithm {kdf_name!r}")
    if bits <= 0 or bits % 8 or iterations <= 0:
        raise PasswordDecodeError("encoded password has an invalid keyLength or iterations")
    # Java's PBEKeySpec hands the secret's chars to PBKDF2 as UTF-8 bytes.
    kdf = PBKDF2HMAC(algorithm=digest(), length=bits // 8, salt=salt, iterations=iterations)
    return kdf.derive(secret.encode("utf-8"))


def _utf16_length(text: str) -> int:
    """Java's `String.length()`: UTF-16 code units, what Kafka stores as `passwordLength`."""
    return len(text.encode("utf-16-le")) // 2


def decode_password(encoded: str, secret: str) -> str:
    """Decode one stored password the way Kafka's `EncryptingPasswordEncoder.decode` does.

    Args:
        encoded: the value stored in `/config/brokers/<id>`.
        secret: the brokers' `password.encoder.secret`.

    Returns:
        The clear-text password.

    Raises:
        PasswordDecodeError: the value is not in the encoded form, uses a cipher we do not
            support, or does not decode with this secret (wrong secret, corrupt data).
    """
    params = _parse(encoded)
    cipher_name = params.get("cipherAlgorithm", "")
    salt = _b64(params, "salt")
    iv = _b64(params, "initializationVector")
    ciphertext = _b64(params, "encryptedPassword")
    key = _derive_key(
        secret,
        params.get("keyFactoryAlgorithm", _DEFAULT_KDF),
        salt,
        _int(params, "iterations"),
        _int(params, "keyLength"),
    )
    expected_length = _int(params, "passwordLength")
    try:
        if cipher_name in ("AES/CBC/PKCS5Padding", "AES/CBC/PKCS7Padding"):
            decryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
            padded = decryptor.update(ciphertext) + decryptor.finalize()
            unpadder = padding.PKCS7(128).unpadder()
            plain = unpadder.update(padded) + unpadder.finalize()
        elif cipher_name == "AES/GCM/NoPadding":
            tag_bytes = _int(params, "authenticationTagLength") // 8
            if len(ciphertext) < tag_bytes or tag_bytes < 4:
                raise PasswordDecodeError("encoded password is shorter than its GCM tag")
            body, tag = ciphertext[:-tag_bytes], ciphertext[-tag_bytes:]
            decryptor = Cipher(
                algorithms.AES(key), modes.GCM(iv, tag, min_tag_length=tag_bytes)
            ).decryptor()
            plain = decryptor.update(body) + decryptor.finalize()
        else:
            raise PasswordDecodeError(f"unsupported cipherAlgorithm {cipher_name!r}")
        password = plain.decode("utf-8")
    except PasswordDecodeError:
        raise
    except (ValueError, InvalidTag):
        raise PasswordDecodeError(
            "password could not be decoded (wrong password.encoder.secret?)"
        ) from None
    if _utf16_length(password) != expected_length:
        raise PasswordDecodeError(
            "password could not be decoded, sanity check of length failed "
            "(wrong password.encoder.secret?)"
        )
    return password


def encode_password(
    password: str,
    secret: str,
    *,
    iterations: int = 4096,
    key_length: int = 128,
    salt: bytes | None = None,
    iv: bytes | None = None,
) -> str:
    """Encode a password as ZK-mode Kafka stores it (AES/CBC/PKCS5Padding, PBKDF2WithHmacSHA512).

    Used to write test trees and, in dual-write, to put a KRaft password config back into
    ZooKeeper in the form brokers can read.

    Args:
        password: the clear-text value.
        secret: the brokers' `password.encoder.secret`.
        iterations: PBKDF2 iterations (Kafka's default 4096).
        key_length: AES key length in bits (Kafka's default 128).
        salt: 256 random bytes by default, like Kafka; pass fixed bytes for a reproducible value.
        iv: 16 random bytes by default.

    Returns:
        The `key:value,...` string.
    """
    salt = os.urandom(256) if salt is None else salt
    iv = os.urandom(16) if iv is None else iv
    key = _derive_key(secret, _DEFAULT_KDF, salt, iterations, key_length)
    padder = padding.PKCS7(128).padder()
    padded = padder.update(password.encode("utf-8")) + padder.finalize()
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    ciphertext = encryptor.update(padded) + encryptor.finalize()
    fields = {
        "keyFactoryAlgorithm": _DEFAULT_KDF,
        "cipherAlgorithm": _DEFAULT_CIPHER,
        "keyLength": str(key_length),
        "salt": base64.b64encode(salt).decode("ascii"),
        "iterations": str(iterations),
        "encryptedPassword": base64.b64encode(ciphertext).decode("ascii"),
        "passwordLength": str(_utf16_length(password)),
        "initializationVector": base64.b64encode(iv).decode("ascii"),
    }
    return ",".join(f"{k}:{v}" for k, v in fields.items())

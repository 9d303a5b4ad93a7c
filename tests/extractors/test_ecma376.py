"""ECMA-376 decryption steps msoffcrypto-tool 6.1 gets wrong (`extractors/ooxml/ecma376.py`):
an agile header whose hash is shorter than its AES key (keys padded with 0x36), a SHA-1
verifier compared on its own length, a standard-encryption stream with a partial last block.
The headers here are encrypted in the test, step by step as MS-OFFCRYPTO writes them; the real
files (Apache POI's) are read in tests/extractors/test_folder_corpus.py."""

from __future__ import annotations

import hashlib
import os
import struct
from typing import Any

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from dpe_server.extractors.ooxml import ecma376
from dpe_server.model.errors import CorruptError

BLOCK_KEYS = {
    "encryptedVerifierHashInput": bytes.fromhex("fea7d2763b4b9e79"),
    "encryptedVerifierHashValue": bytes.fromhex("d7aa0f6d3061344e"),
    "encryptedKeyValue": bytes.fromhex("146e0be7abacd0d6"),
}


def cbc(key: bytes, iv: bytes, data: bytes) -> bytes:
    data += b"\0" * (-len(data) % 16)
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    return encryptor.update(data) + encryptor.finalize()


def agile_header(password: str, secret: bytes, hash_name: str, key_bits: int) -> dict[str, Any]:
    """The password key encryptor's fields as msoffcrypto-tool parses them."""
    salt = bytes(range(16))
    spin = 1000

    def h(data: bytes) -> bytes:
        return hashlib.new(hash_name, data).digest()

    digest = h(salt + password.encode("utf-16-le"))
    for i in range(spin):
        digest = h(struct.pack("<I", i) + digest)
    size = key_bits // 8
    verifier = os.urandom(16)
    plain = {
        "encryptedVerifierHashInput": verifier,
        "encryptedVerifierHashValue": h(verifier),
        "encryptedKeyValue": secret,
    }
    info: dict[str, Any] = {
        "spinValue": spin,
        "passwordSalt": salt,
        "passwordHashAlgorithm": hash_name.upper(),
        "passwordKeyBits": key_bits,
    }
    for field, block_key in BLOCK_KEYS.items():
        key = h(digest + block_key)[:size].ljust(size, b"\x36")
        info[field] = cbc(key, salt, plain[field])
    return info


@pytest.mark.parametrize(
    ("hash_name", "key_bits"), [("sha1", 256), ("sha1", 128), ("sha512", 256), ("sha256", 192)]
)
def test_agile_key_for_every_hash_and_key_size(hash_name: str, key_bits: int) -> None:
    secret = os.urandom(key_bits // 8)
    info = agile_header("pass", secret, hash_name, key_bits)
    assert ecma376.agile_secret_key(info, "pass") == secret
    assert ecma376.agile_secret_key(info, "Pass") is None


def test_agile_headers_out_of_the_specification_are_refused() -> None:
    info = agile_header("pass", os.urandom(32), "sha1", 256)
    with pytest.raises(ValueError, match="whirlpool"):
        ecma376.agile_secret_key({**info, "passwordHashAlgorithm": "WHIRLPOOL"}, "pass")
    with pytest.raises(CorruptError, match="spin count"):
        ecma376.agile_secret_key({**info, "spinValue": ecma376.MAX_SPIN_COUNT + 1}, "pass")


def test_standard_package_ignores_bytes_past_the_last_whole_block() -> None:
    key = os.urandom(16)
    package = b"PK\3\4" + os.urandom(6079)  # 6,083 bytes, as Apache POI's extenxls_pwd123
    padded = package + b"\0" * (-len(package) % 16)
    encryptor = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    body = encryptor.update(padded) + encryptor.finalize()
    stream = struct.pack("<Q", len(package)) + body + b"\0" * 40  # not a whole block
    assert ecma376.standard_package(key, stream) == package
    with pytest.raises(CorruptError, match="shorter than the size"):
        ecma376.standard_package(key, stream[:100])

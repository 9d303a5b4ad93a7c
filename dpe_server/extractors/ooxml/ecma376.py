"""The two steps of ECMA-376 (MS-OFFCRYPTO) decryption that msoffcrypto-tool 6.1 gets wrong for
some real files; its parsing of `EncryptionInfo` and its agile payload decryption are used as
they are (`ooxml.decrypt`).

- Agile encryption, key from a password: every key derived from the iterated hash is made
  `keyBits / 8` bytes long, truncated or padded with 0x36 bytes (MS-OFFCRYPTO 2.3.4.11).
  msoffcrypto-tool only truncates, so a SHA-1 hash (20 bytes) for a 256-bit AES key gives a
  160-bit key AES refuses (Apache POI writes such files); and it compares the SHA-1 verifier
  hash (20 bytes) with its decrypted value padded to the cipher block (32 bytes), so no
  SHA-1 password ever verifies. Here the verifier hash is compared on its own length.
- Standard encryption, the package: AES-ECB over the whole blocks that hold the declared
  package size. msoffcrypto-tool decrypts the whole stream, which some writers leave with
  trailing bytes that are not a whole block (the cipher then refuses the stream).
"""

from __future__ import annotations

import hashlib
import struct
from typing import Any

from dpe_server.model.errors import CorruptError

_VERIFIER_INPUT = bytes.fromhex("fea7d2763b4b9e79")
_VERIFIER_VALUE = bytes.fromhex("d7aa0f6d3061344e")
_KEY_VALUE = bytes.fromhex("146e0be7abacd0d6")
"""The block keys MS-OFFCRYPTO 2.3.4.13 fixes for the password key encryptor."""
MAX_SPIN_COUNT = 10_000_000
"""The largest spin count the specification allows; more is a damaged (or hostile) header."""
_BLOCK = 16
_HASHES = {
    "sha1": hashlib.sha1,
    "sha256": hashlib.sha256,
    "sha384": hashlib.sha384,
    "sha512": hashlib.sha512,
    "md5": hashlib.md5,
}
"""The hash algorithms MS-OFFCRYPTO names for agile encryption that hashlib always has."""
_INDEX = struct.Struct("<I").pack


def agile_secret_key(info: dict[str, Any], password: str) -> bytes | None:
    """The package key of an agile-encrypted file, from msoffcrypto-tool's parsed `info`, or
    None when the file's verifier rejects `password`. ValueError for a hash algorithm or a
    key size no cipher here has."""
    spin = int(info["spinValue"])
    if not 0 <= spin <= MAX_SPIN_COUNT:
        raise CorruptError(f"The encryption header's spin count ({spin}) is out of range.")
    name = str(info["passwordHashAlgorithm"]).lower().replace("-", "")
    if name not in _HASHES:
        raise ValueError(name)
    hash_ = _HASHES[name]
    salt: bytes = info["passwordSalt"]
    key_size = int(info["passwordKeyBits"]) // 8
    digest = hash_(salt + password.encode("utf-16-le")).digest()
    for i in range(spin):
        digest = hash_(_INDEX(i) + digest).digest()

    def key(block_key: bytes) -> bytes:
        derived = hash_(digest + block_key).digest()
        return derived[:key_size].ljust(key_size, b"\x36")

    hash_input = _cbc(key(_VERIFIER_INPUT), salt, info["encryptedVerifierHashInput"])
    hash_value = _cbc(key(_VERIFIER_VALUE), salt, info["encryptedVerifierHashValue"])
    expected = hash_(hash_input).digest()
    if hash_value[: len(expected)] != expected:
        return None
    return _cbc(key(_KEY_VALUE), salt, info["encryptedKeyValue"])[:key_size]


def standard_package(key: bytes, stream: bytes) -> bytes:
    """The package in a standard-encryption `EncryptedPackage` stream (its size, 8 bytes, then
    AES-ECB blocks), decrypted with `key`."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    if len(stream) < 8:
        raise CorruptError("The encrypted package is shorter than its size field.")
    (size,) = struct.unpack("<Q", stream[:8])
    whole = -(-size // _BLOCK) * _BLOCK
    if whole > len(stream) - 8:
        raise CorruptError("The encrypted package is shorter than the size it declares.")
    decryptor = Cipher(algorithms.AES(key), modes.ECB()).decryptor()
    return (decryptor.update(stream[8 : 8 + whole]) + decryptor.finalize())[:size]


def _cbc(key: bytes, iv: bytes, data: bytes) -> bytes:
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    whole = len(data) - len(data) % _BLOCK
    decryptor = Cipher(algorithms.AES(key), modes.CBC(iv[:_BLOCK])).decryptor()
    return decryptor.update(data[:whole]) + decryptor.finalize()

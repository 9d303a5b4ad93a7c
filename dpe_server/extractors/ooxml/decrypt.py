"""Password-protected OOXML packages (an OLE2/CFB container holding `EncryptionInfo` and
`EncryptedPackage`): decrypted in memory (agile and standard encryption), trying
`VelvetSweatshop` first, then the passwords given for the file (`extractors.passwords`). The
decrypted package exists only in this process's memory.

msoffcrypto-tool parses the header, checks a standard-encryption password and decrypts an
agile package; the agile key derivation and the standard package decryption are `ecma376`'s,
which handle the files msoffcrypto-tool 6.1 refuses. A password is accepted when the file's
verifier accepts it and the package decrypts to a zip.
"""

from __future__ import annotations

import io
import zipfile
from typing import Any, BinaryIO

from dpe_server.extractors.ooxml import ecma376
from dpe_server.extractors.passwords import (
    HOW_TO_GIVE,
    OOXML_DEFAULT,
    Candidates,
    candidates,
    untried_note,
)
from dpe_server.model.errors import CorruptError, EncryptedError


def unlock(f: BinaryIO, file_type: str) -> BinaryIO:
    """The decrypted package of the encrypted OOXML file `f`, or the project's error."""
    import msoffcrypto

    f.seek(0)
    try:
        office = msoffcrypto.OfficeFile(f)
    except Exception as exc:  # messages of the library are never shown: they might quote input
        raise CorruptError(
            f"The encrypted .{file_type} container is damaged ({type(exc).__name__})."
        ) from None
    tried = candidates(OOXML_DEFAULT)
    try:
        found = _first(office, tried)
    except CorruptError:
        raise
    except (ValueError, NotImplementedError, AssertionError) as exc:
        raise EncryptedError(
            f"This .{file_type} file uses an encryption this server cannot open "
            f"({type(exc).__name__}); save an unprotected copy to read it."
        ) from None
    except Exception as exc:
        raise CorruptError(
            f"The encrypted .{file_type} container is damaged ({type(exc).__name__})."
        ) from None
    if found is None:
        raise EncryptedError(
            f"This .{file_type} file is password-protected and no password given for it "
            f"opens it{untried_note(tried)}; {HOW_TO_GIVE}."
        )
    return found


def _first(office: Any, passwords: Candidates) -> BinaryIO | None:
    """The package decrypted with the first password that opens it, or None."""
    from msoffcrypto.exceptions import DecryptionError, InvalidKeyError

    for password in passwords:
        try:
            out = _decrypted(office, password)
        except (InvalidKeyError, DecryptionError):
            continue
        if out is not None and zipfile.is_zipfile(out):
            out.seek(0)
            return out
    return None


def _decrypted(office: Any, password: str) -> BinaryIO | None:
    """The package decrypted with `password`, or None when the file's verifier rejects it."""
    if office.type == "agile":
        key = ecma376.agile_secret_key(office.info, password)
        if key is None:
            return None
        office.load_key(secret_key=key)
        out = io.BytesIO()
        office.decrypt(out)
        return out
    if office.type != "standard":  # extensible encryption: a third-party cipher
        raise NotImplementedError(office.type)
    office.load_key(password=password, verify_password=True)  # InvalidKeyError if refused
    with office.file.openstream("EncryptedPackage") as stream:
        return io.BytesIO(ecma376.standard_package(office.secret_key, stream.read()))

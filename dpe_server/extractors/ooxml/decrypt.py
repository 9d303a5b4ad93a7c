"""Password-protected OOXML packages (an OLE2/CFB container holding `EncryptionInfo` and
`EncryptedPackage`): decrypted in memory with msoffcrypto-tool (agile and standard
encryption), trying `VelvetSweatshop` first, then the passwords given for the file
(`extractors.passwords`). The decrypted package exists only in this process's memory.

A password is accepted when the file's verifier accepts it; some writers store a verifier
msoffcrypto-tool does not check right (Apache POI's agile files with `VelvetSweatshop`), so
when no password verifies, each is tried again for a decryption that yields a zip.
"""

from __future__ import annotations

import io
import zipfile
from typing import Any, BinaryIO

from dpe_server.extractors.passwords import HOW_TO_GIVE, OOXML_DEFAULT, candidates
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
        found = _first(office, tried, verify=True) or _first(office, tried, verify=False)
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
            f"opens it; {HOW_TO_GIVE}."
        )
    return found


def _first(office: Any, passwords: tuple[str, ...], *, verify: bool) -> BinaryIO | None:
    """The package decrypted with the first password that opens it, or None."""
    from msoffcrypto.exceptions import DecryptionError, InvalidKeyError

    for password in passwords:
        try:
            office.load_key(password=password, verify_password=verify)
            out = io.BytesIO()
            office.decrypt(out)
        except (InvalidKeyError, DecryptionError):
            continue
        except ValueError:
            if verify:  # an encryption the library cannot handle
                raise
            continue  # a wrong key, unverified, may give bytes no cipher accepts
        if verify or zipfile.is_zipfile(out):
            out.seek(0)
            return out
    return None

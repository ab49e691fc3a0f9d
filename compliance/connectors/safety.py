"""Checks run on untrusted bytes before any parser sees them: size limits, zip bombs, encryption, DTDs."""

from __future__ import annotations

import io
import re
import zipfile
import zlib

from compliance.connectors.config import SplitConfig
from compliance.errors import DocumentError, DocumentTooLargeError, EncryptedDocumentError

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_RATIO_MIN_MEMBER = 1024 * 1024
_DTD_RE = re.compile(rb"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)


def check_size(data: bytes, source: str, config: SplitConfig) -> None:
    """Refuse empty input and input over the byte limit.

    Raises:
        DocumentError: The input is empty.
        DocumentTooLargeError: The input is larger than ``config.resolved_max_bytes()``.
    """
    if not data:
        raise DocumentError(source, "the file is empty")
    limit = config.resolved_max_bytes()
    if len(data) > limit:
        raise DocumentTooLargeError(
            source,
            f"the file has {len(data):,} bytes, more than the limit of {limit:,} "
            "(raise COMPLIANCE_MAX_DOCUMENT_BYTES or SplitConfig.max_bytes to accept it)",
        )


def open_ooxml_zip(data: bytes, source: str, config: SplitConfig, main_part: str) -> zipfile.ZipFile:
    """Open an Office Open XML package after checking it is safe to unpack.

    Args:
        data: The file's bytes.
        source: Name used in error messages.
        config: Limits (member count, total uncompressed size, compression ratio).
        main_part: The member that must exist (``"word/document.xml"``).

    Returns:
        The open zip file (the caller may ignore it and re-open the bytes with its own library).

    Raises:
        EncryptedDocumentError: The file is an OLE compound file (password-protected OOXML or legacy .doc).
        DocumentError: Not a zip, no main part, or an XML part declares a DTD/entities.
        DocumentTooLargeError: The package would unpack beyond the limits (zip bomb).
    """
    if data[:8] == OLE_MAGIC:
        raise EncryptedDocumentError(
            source,
            "the file is an OLE compound file: a password-protected (encrypted) Office document or a legacy "
            ".doc; remove the password or save it as .docx",
        )
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, OSError, ValueError, EOFError) as e:
        raise DocumentError(source, f"not a valid .docx (zip) file: {e}") from e
    if len(infos) > config.max_zip_members:
        raise DocumentTooLargeError(
            source, f"the package has {len(infos):,} members, more than {config.max_zip_members:,}"
        )
    total = 0
    for info in infos:
        if info.flag_bits & 0x1:
            raise EncryptedDocumentError(source, f"zip member {info.filename!r} is encrypted")
        total += info.file_size
        if total > config.max_unpacked_bytes:
            raise DocumentTooLargeError(
                source,
                f"the package would unpack to more than {config.max_unpacked_bytes:,} bytes "
                "(possible zip bomb)",
            )
        if info.file_size > _RATIO_MIN_MEMBER:
            ratio = info.file_size / max(1, info.compress_size)
            if ratio > config.max_compression_ratio:
                raise DocumentTooLargeError(
                    source,
                    f"zip member {info.filename!r} has compression ratio {ratio:,.0f}:1, more than "
                    f"{config.max_compression_ratio:,.0f}:1 (possible zip bomb)",
                )
    names = {info.filename for info in infos}
    if main_part not in names:
        raise DocumentError(source, f"not a Word document: the package has no {main_part}")
    for info in infos:
        if info.filename.endswith((".xml", ".rels")):
            try:
                with archive.open(info) as member:
                    head = member.read(64 * 1024)
            except (zipfile.BadZipFile, zlib.error, OSError, ValueError, EOFError, RuntimeError) as e:
                raise DocumentError(source, f"zip member {info.filename!r} is corrupt: {e}") from e
            if _DTD_RE.search(head):
                raise DocumentError(
                    source,
                    f"zip member {info.filename!r} declares a DTD or entities, which Office documents never "
                    "need; refusing it (possible XML external entity attack)",
                )
    return archive

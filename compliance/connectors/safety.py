"""Checks run on untrusted bytes before the work: size, paragraph and zip limits, encryption, DTDs."""

from __future__ import annotations

import io
import zipfile
import zlib

from compliance.connectors.config import SplitConfig
from compliance.errors import (
    DocumentError,
    DocumentTooLargeError,
    EncryptedDocumentError,
    UnsafeDocumentError,
)

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_RATIO_MIN_MEMBER = 1024 * 1024


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


def check_paragraph_count(count: int, source: str, config: SplitConfig) -> None:
    """Refuse a document with more blocks or paragraphs than ``config.max_paragraphs``.

    Connectors call it on their blocks before the splitting work, and :func:`~compliance.connectors.parse_bytes`
    again on the paragraphs.

    Raises:
        DocumentTooLargeError: Over the limit.
    """
    if count > config.max_paragraphs:
        raise DocumentTooLargeError(
            source,
            f"the document has more than {config.max_paragraphs:,} paragraphs; split it, or raise "
            "SplitConfig.max_paragraphs",
        )


_CHUNK = 256 * 1024
_LOCAL_HEADER = b"PK\x03\x04"


def _member_bytes(
    data: bytes, info: zipfile.ZipInfo, source: str, budget: int, keep: bool, limit: int
) -> tuple[int, bytes]:
    """Inflate one member from its raw bytes, counting the output as it comes (declared sizes are not trusted).

    Returns:
        The number of bytes it inflates to, and those bytes when ``keep`` (else ``b""``).

    Raises:
        DocumentTooLargeError: The member inflates beyond ``budget`` bytes.
        DocumentError: A corrupt member or an unsupported compression method.
    """
    off = info.header_offset
    header = data[off : off + 30]
    if len(header) < 30 or header[:4] != _LOCAL_HEADER:
        raise DocumentError(source, f"zip member {info.filename!r} is corrupt (no local header)")
    name_len, extra_len = int.from_bytes(header[26:28], "little"), int.from_bytes(header[28:30], "little")
    start = off + 30 + name_len + extra_len
    raw = memoryview(data)[start : start + info.compress_size]
    if info.compress_type == zipfile.ZIP_STORED:
        size = len(raw)
        if size > budget:
            raise _bomb(source, limit)
        return size, bytes(raw) if keep else b""
    if info.compress_type != zipfile.ZIP_DEFLATED:
        raise DocumentError(
            source, f"zip member {info.filename!r} uses compression method {info.compress_type}, not deflate"
        )
    inflater = zlib.decompressobj(-15)
    kept: list[bytes] = []
    size = 0
    pos = 0
    try:
        while not inflater.eof:
            if inflater.unconsumed_tail:
                chunk = inflater.decompress(inflater.unconsumed_tail, _CHUNK)
            elif pos < len(raw):
                chunk = inflater.decompress(raw[pos : pos + _CHUNK], _CHUNK)
                pos += _CHUNK
            else:
                break
            size += len(chunk)
            if size > budget:
                raise _bomb(source, limit)
            if keep:
                kept.append(chunk)
    except zlib.error as e:
        raise DocumentError(source, f"zip member {info.filename!r} is corrupt: {e}") from e
    return size, b"".join(kept)


def _bomb(source: str, limit: int) -> DocumentTooLargeError:
    return DocumentTooLargeError(
        source,
        f"the package unpacks to more than {limit:,} bytes (possible zip bomb), counted while inflating",
    )


#: what a package with this main part is, for error messages
_KIND = {"word/document.xml": ".docx", "xl/workbook.xml": ".xlsx", "content.xml": ".odt"}
_LEGACY = {"word/document.xml": ".doc", "xl/workbook.xml": ".xls", "content.xml": ".doc"}


def open_ooxml_zip(data: bytes, source: str, config: SplitConfig, main_part: str) -> zipfile.ZipFile:
    """Open an Office Open XML package after checking it is safe to unpack.

    Every member is inflated once, with a running count of the bytes it really produces (the sizes the zip
    directory declares are only a first filter): the total must stay within ``config.max_unpacked_bytes`` and
    each member must inflate to exactly its declared size (so that the library that reads the package next,
    which trusts the declared sizes, reads what was checked). Every XML part is parsed by libxml2 (entities
    unresolved, no network, no DTD loading) and refused when the parser sees a DOCTYPE: Office documents never
    declare one, and a DTD is how entity-expansion and external-entity attacks start. The decision is the
    parser's, so encodings (UTF-16 with or without BOM) and long comments before the DOCTYPE change nothing.

    Args:
        data: The file's bytes.
        source: Name used in error messages.
        config: Limits (member count, total uncompressed size, compression ratio).
        main_part: The member that must exist (``"word/document.xml"``).

    Returns:
        The open zip file (the caller may ignore it and re-open the bytes with its own library).

    Raises:
        EncryptedDocumentError: The file is an OLE compound file (password-protected OOXML or legacy .doc).
        DocumentError: Not a zip, no main part, a corrupt member, or sizes the zip directory misstates.
        UnsafeDocumentError: An XML part declares a DTD.
        DocumentTooLargeError: The package unpacks beyond the limits (zip bomb).
    """
    from compliance.xml_safety import dtd_problem

    if data[:8] == OLE_MAGIC:
        raise EncryptedDocumentError(
            source,
            "the file is an OLE compound file: a password-protected (encrypted) Office document or a legacy "
            f"{_LEGACY.get(main_part, '.doc')}; remove the password or save it as {_KIND.get(main_part, '.docx')}",
        )
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, OSError, ValueError, EOFError) as e:
        raise DocumentError(source, f"not a valid {_KIND.get(main_part, 'Office')} (zip) file: {e}") from e
    if len(infos) > config.max_zip_members:
        raise DocumentTooLargeError(
            source, f"the package has {len(infos):,} members, more than {config.max_zip_members:,}"
        )
    total = 0
    for info in infos:  # the declared sizes: a cheap first filter
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
        raise DocumentError(
            source, f"not a {_KIND.get(main_part, 'Office')} file: the package has no {main_part}"
        )
    unpacked = 0
    for info in infos:  # the real sizes, counted while inflating
        is_xml = info.filename.lower().endswith((".xml", ".rels"))
        size, content = _member_bytes(
            data, info, source, config.max_unpacked_bytes - unpacked, is_xml, config.max_unpacked_bytes
        )
        unpacked += size
        if size != info.file_size:
            raise DocumentError(
                source,
                f"zip member {info.filename!r} inflates to {size:,} bytes but the zip directory says "
                f"{info.file_size:,}; the file is corrupt or forged",
            )
        if size > _RATIO_MIN_MEMBER and size / max(1, info.compress_size) > config.max_compression_ratio:
            raise DocumentTooLargeError(
                source, f"zip member {info.filename!r} has a compression ratio over "
                f"{config.max_compression_ratio:,.0f}:1 (possible zip bomb)",
            )  # fmt: skip
        if is_xml and (problem := dtd_problem(content)):
            raise UnsafeDocumentError(
                source,
                f"zip member {info.filename!r} {problem}, which Office documents never need; refusing it "
                "(possible XML entity-expansion or external entity attack)",
            )
    return archive

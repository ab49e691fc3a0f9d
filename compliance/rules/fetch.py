"""Getting a law pack's text: a given file, a local mirror, or the official download — checksum-verified.

Order (:func:`fetch_pack_source`): ``from_path`` if given; else the first of the pack's sources present in the
mirror directory (``mirror`` argument, else the ``COMPLIANCE_LAW_MIRROR`` setting, else ``<shared data>/laws``
when the development data folder exists); else the first source with an official URL, downloaded with httpx
(timeouts, retries with exponential backoff on connection errors, timeouts and 5xx, streamed to a temporary
file, partial bodies detected through Content-Length). Every file is checked against the sha256 the pack
declares unless ``verify=False``.
"""

from __future__ import annotations

import logging
import tempfile
import time
from functools import lru_cache
from pathlib import Path

from compliance.errors import ChecksumMismatchError, CorpusFormatError, DownloadError
from compliance.progress import bar
from compliance.rules.building import sha256_hex
from compliance.rules.corpus import Law
from compliance.rules.packs import LawPack, PackSource, apply_pack_metadata, get_pack

__all__ = [
    "clear_law_cache",
    "download",
    "fetch_pack_source",
    "install_pack",
    "load_pack_law",
    "resolve_mirror",
]

log = logging.getLogger(__name__)

MAX_DOWNLOAD_BYTES = 200 * 1024 * 1024
_USER_AGENT = "compliance-plugin (law pack installer; +https://eur-lex.europa.eu)"


def resolve_mirror(mirror: Path | str | None = None) -> Path | None:
    """The law mirror directory: the argument, else the setting, else ``<shared data>/laws`` if it exists."""
    if mirror is not None:
        return Path(mirror)
    from compliance.settings import get_settings

    settings = get_settings()
    if settings.law_mirror is not None:
        return Path(settings.law_mirror)
    shared = settings.resolved_shared_data()
    if shared is not None and (shared / "laws").is_dir():
        return shared / "laws"
    return None


def _verify(pack: LawPack, data: bytes, source: str, expected: PackSource | None) -> PackSource:
    digest = sha256_hex(data)
    if expected is not None:
        if digest != expected.sha256:
            raise ChecksumMismatchError(
                f"{source}: sha256 {digest} does not match {expected.sha256} declared by law pack "
                f"{pack.name!r} for {expected.file}; the file is corrupt, partial or a different version"
            )
        return expected
    match = pack.source_for_checksum(digest)
    if match is None:
        known = ", ".join(f"{s.file} ({s.sha256[:12]}…)" for s in pack.sources)
        raise ChecksumMismatchError(
            f"{source}: sha256 {digest} matches none of law pack {pack.name!r}'s files ({known}); "
            "use --no-verify to import it anyway"
        )
    return match


def download(
    url: str,
    *,
    timeout: float,
    retries: int,
    backoff: float = 0.5,
    max_bytes: int = MAX_DOWNLOAD_BYTES,
) -> bytes:
    """GET ``url`` and return the body, streamed through a temporary file.

    Retries (``retries`` times, sleeping ``backoff * 2**attempt`` seconds) on connection errors, timeouts,
    partial bodies and HTTP 5xx/429; other HTTP errors fail at once.

    Raises:
        DownloadError: every attempt failed, an HTTP error status, or the body is larger than ``max_bytes``.
    """
    import httpx

    last_problem = "no attempt made"
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(backoff * 2 ** (attempt - 1))
        try:
            with (
                httpx.Client(
                    timeout=httpx.Timeout(timeout), follow_redirects=True, headers={"User-Agent": _USER_AGENT}
                ) as client,
                client.stream("GET", url) as response,
            ):
                status = response.status_code
                if status >= 500 or status == 429:
                    last_problem = f"HTTP {status}"
                    log.info("download %s: HTTP %s (attempt %d)", url, status, attempt + 1)
                    continue
                if status >= 400:
                    raise DownloadError(f"{url}: HTTP {status} {response.reason_phrase}".rstrip())
                expected = response.headers.get("Content-Length")
                expected_len = int(expected) if expected and expected.isdigit() else None
                if expected_len is not None and expected_len > max_bytes:
                    raise DownloadError(f"{url}: {expected_len} bytes is more than the limit of {max_bytes}")
                with (
                    tempfile.TemporaryFile() as tmp,
                    bar(expected_len, desc=url.rsplit("/", 1)[-1][:40], unit="B") as progress,
                ):
                    received = 0
                    for chunk in response.iter_bytes(64 * 1024):
                        received += len(chunk)
                        if received > max_bytes:
                            raise DownloadError(f"{url}: more than the limit of {max_bytes} bytes")
                        tmp.write(chunk)
                        progress.update(len(chunk))
                    if expected_len is not None and received != expected_len:
                        last_problem = f"partial body: {received} of {expected_len} bytes"
                        continue
                    tmp.seek(0)
                    return tmp.read()
        except httpx.TimeoutException as e:
            last_problem = f"timed out after {timeout:g} s ({type(e).__name__})"
        except httpx.TransportError as e:  # connection refused/reset, protocol errors, peer closed early
            last_problem = f"{type(e).__name__}: {e}"
        log.info("download %s failed (attempt %d): %s", url, attempt + 1, last_problem)
    raise DownloadError(f"{url}: download failed after {retries + 1} attempt(s): {last_problem}")


def fetch_pack_source(
    pack: LawPack,
    *,
    from_path: Path | str | None = None,
    mirror: Path | str | None = None,
    timeout: float | None = None,
    retries: int | None = None,
    verify: bool = True,
    backoff: float = 0.5,
) -> tuple[bytes, str]:
    """The bytes of ``pack``'s text and where they came from (path or URL).

    Args:
        pack: The law pack.
        from_path: A file supplied by the user (``--from``); verified against any of the pack's checksums.
        mirror: A mirror directory (files at ``<mirror>/<source.file>``); default from settings.
        timeout: Seconds per HTTP request (default: ``download_timeout`` setting).
        retries: Extra attempts after a failed download (default: ``download_retries`` setting).
        verify: Check sha256 against the pack (``--no-verify`` turns it off).
        backoff: First retry delay in seconds (doubles each retry).

    Raises:
        ChecksumMismatchError: the bytes are not the file the pack declares.
        DownloadError: nothing local and the download failed, or the pack has no download URL.
        CorpusFormatError: ``from_path`` cannot be read.
    """
    if from_path is not None:
        path = Path(from_path)
        try:
            data = path.read_bytes()
        except OSError as e:
            raise CorpusFormatError(str(path), f"cannot read the file: {e.strerror or e}") from e
        if verify:
            _verify(pack, data, str(path), None)
        return data, str(path)

    mirror_dir = resolve_mirror(mirror)
    if mirror_dir is not None:
        for source in pack.sources:
            candidate = mirror_dir / source.file
            if candidate.is_file():
                data = candidate.read_bytes()
                if verify:
                    _verify(pack, data, str(candidate), source)
                return data, str(candidate)

    downloadable = [s for s in pack.sources if s.url]
    if not downloadable:
        where = f" (looked in mirror {mirror_dir})" if mirror_dir is not None else ""
        raise DownloadError(
            f"law pack {pack.name!r} has no official download URL for its format and no mirror copy was "
            f"found{where}; supply the file with --from PATH or set COMPLIANCE_LAW_MIRROR to a folder "
            f"containing {pack.mirror_file}"
        )
    if timeout is None or retries is None:
        from compliance.settings import get_settings

        settings = get_settings()
        timeout = settings.download_timeout if timeout is None else timeout
        retries = settings.download_retries if retries is None else retries
    source = downloadable[0]
    url = source.url or ""
    data = download(url, timeout=timeout, retries=retries, backoff=backoff)
    if verify:
        _verify(pack, data, url, source)
    return data, url


def install_pack(
    name: str,
    *,
    from_path: Path | str | None = None,
    mirror: Path | str | None = None,
    verify: bool = True,
    timeout: float | None = None,
    retries: int | None = None,
) -> Law:
    """Fetch (see :func:`fetch_pack_source`) and parse the law of pack ``name``, with the pack's metadata.

    Nothing is written to a database here; the caller stores the returned :class:`Law`. The editorial
    article↔recital map stays on the pack: ``get_pack(name).recital_map()``.

    Raises:
        LawNotFoundError: unknown pack. ChecksumMismatchError, DownloadError, CorpusFormatError: as above.
    """
    from compliance.rules.detect import parse_law

    pack = get_pack(name)
    data, source = fetch_pack_source(
        pack, from_path=from_path, mirror=mirror, verify=verify, timeout=timeout, retries=retries
    )
    entry = pack.source_for_checksum(sha256_hex(data))
    law = parse_law(data, source=source, fmt=entry.format if entry is not None else None)
    return apply_pack_metadata(law, pack)


@lru_cache(maxsize=16)
def _cached_pack_law(name: str, mirror: str | None, law_mirror_setting: str | None) -> Law:
    return install_pack(name, mirror=mirror)


def clear_law_cache() -> None:
    """Forget laws cached by :func:`load_pack_law` (tests, or after changing the mirror)."""
    _cached_pack_law.cache_clear()


def load_pack_law(name: str, *, mirror: Path | str | None = None) -> Law:
    """The parsed law of pack ``name`` from the mirror (or its official URL), cached per process.

    This is the entry point for code that needs the law's text (training data, retrieval corpora).
    """
    from compliance.settings import get_settings

    setting = get_settings().law_mirror
    return _cached_pack_law(name.lower(), str(mirror) if mirror else None, str(setting) if setting else None)

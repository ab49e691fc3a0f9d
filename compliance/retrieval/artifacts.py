"""Helpers shared by the index directories: config.json with version and checksum, text hashing."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from compliance.errors import RetrievalError

__all__ = ["corpus_checksum", "read_config", "share_as_umask_allows", "text_hash", "write_config"]

FORMAT_VERSION = 1


def text_hash(text: str) -> str:
    """Short content hash of one text (sha256, 16 hex digits)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def corpus_checksum(hashes: Mapping[str, str] | Iterable[tuple[str, str]]) -> str:
    """Order-independent sha256 over ``(id, text hash)`` pairs."""
    items = hashes.items() if isinstance(hashes, Mapping) else hashes
    h = hashlib.sha256()
    for doc_id, th in sorted(items):
        h.update(f"{doc_id}\t{th}\n".encode())
    return h.hexdigest()


def _current_umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    import os

    mask = os.umask(0o022)  # no portable way to read it without setting it
    os.umask(mask)
    return mask


def share_as_umask_allows(directory: Path) -> None:
    """Give the files under an artifact directory the permissions the process's umask allows.

    Some writers (safetensors) create weights ``0600`` whatever the umask, so that another account of the same
    group finds a model directory it cannot read and gets a misleading "no trained model" error. Files become
    ``0666 & ~umask`` and folders ``0777 & ~umask`` (with the usual umask 022: readable by everyone, writable by
    the owner); permissions are only ever widened up to that, never narrowed.
    """
    import os
    import stat

    mask = _current_umask()
    for root, dirs, files in os.walk(directory):
        for name, full in [(d, 0o777) for d in dirs] + [(f, 0o666) for f in files] + [(".", 0o777)]:
            path = Path(root) / name
            try:
                mode = stat.S_IMODE(path.stat().st_mode)
                wanted = mode | (full & ~mask & 0o755 if full == 0o777 else full & ~mask & 0o644)
                if wanted != mode:
                    path.chmod(wanted)
            except OSError:  # a file we do not own: leave it
                continue


def write_config(path: Path, kind: str, payload: Mapping[str, Any]) -> None:
    """Write ``config.json`` with the artifact kind, format and package versions."""
    from compliance import __version__

    data = {"kind": kind, "format_version": FORMAT_VERSION, "package_version": __version__, **payload}
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(json.dumps(data, indent=2, sort_keys=True), encoding="utf-8")


def read_config(path: Path, kind: str) -> dict[str, Any]:
    """Read and check ``config.json`` of an artifact directory.

    Raises:
        RetrievalError: missing, unreadable, or of another kind.
    """
    cfg_path = Path(path) / "config.json"
    try:
        data = json.loads(cfg_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise RetrievalError(f"{cfg_path}: cannot read index config ({e}); rebuild the index") from e
    if data.get("kind") != kind:
        raise RetrievalError(f"{path}: is a {data.get('kind')!r} directory, expected {kind!r}")
    if data.get("format_version", 0) > FORMAT_VERSION:
        raise RetrievalError(f"{path}: written by a newer version (format {data['format_version']}); upgrade")
    return dict(data)

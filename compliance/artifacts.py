"""One contract for every trained or built artifact: a directory that describes itself.

::

    <artifact>/
      config.json     kind, format_version, package_version, provenance (checksums of the training data or
                      corpus and of the base model's weights), and every parameter ``load(path)`` needs
      MODEL_CARD.md   what it is, how it was made, how well it does
      ...             the artifact's own files (weights, arrays), in sub-folders named by config.json where needed

The kinds, each declared by an :class:`ArtifactSpec` beside its code: the GDPR classifier (``gdpr-classifier``,
:mod:`compliance.models.classifier`), the link decision (``link-decision``, :mod:`compliance.linking.decision`), the
two re-rankers (``cross-encoder``, ``pli``, :mod:`compliance.retrieval.rerank`) and the retrieval indexes
(``hybrid`` with its ``bm25`` and ``dense`` parts, :func:`index_spec`). Each artifact's ``save()`` writes its config through
:func:`write_config` and its ``load(path)`` reads it back through :func:`read_config` (the sentence-transformers
style: the directory is all ``load`` needs). :func:`read_config` turns every failure into the artifact's own error
(:class:`~compliance.errors.ModelNotFoundError` / :class:`~compliance.errors.ModelError` for models,
:class:`~compliance.errors.RetrievalError` for indexes) with a message that says how to rebuild it, and brings
directories written by older versions up to date through the kind's ``upgrade`` function (or refuses them with
that message).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from compliance.errors import ComplianceError

__all__ = [
    "CARD_FILE",
    "CONFIG_FILE",
    "ENVELOPE_KEYS",
    "INDEX_REBUILD",
    "WEIGHT_FILES",
    "ArtifactSpec",
    "corpus_checksum",
    "file_sha256",
    "index_spec",
    "json_sha256",
    "model_spec",
    "read_config",
    "share_as_umask_allows",
    "text_hash",
    "unversioned_upgrade",
    "weights_sha256",
    "write_card",
    "write_config",
]

CONFIG_FILE = "config.json"
CARD_FILE = "MODEL_CARD.md"
#: The keys every config.json carries besides the artifact's own parameters.
ENVELOPE_KEYS = ("kind", "format_version", "package_version", "provenance")
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")

Upgrade = Callable[[dict[str, Any], Path], dict[str, Any]]


@dataclass(frozen=True)
class ArtifactSpec:
    """What a kind of artifact is called, which format it is at, and how a user gets a new one.

    Attributes:
        kind: the ``kind`` written into config.json.
        format_version: the version this code writes (and the newest it reads).
        description: what it is, for messages (``"GDPR classifier"``).
        rebuild: how to get a new one, for messages (``"train one with `compliance train`"``).
        error: raised for an unreadable, foreign or unsupported directory.
        missing_error: raised when there is no config.json at all.
        upgrade: turns the raw config of an older format (or of an older layout without ``kind``) into the current
            shape, reading other files of ``path`` if needed; returns configs it does not recognise unchanged.
    """

    kind: str
    format_version: int
    description: str
    rebuild: str
    error: type[ComplianceError]
    missing_error: type[ComplianceError]
    upgrade: Upgrade | None = None


# -- checksums -----------------------------------------------------------------------------------------------------
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


def json_sha256(value: Any) -> str:
    """sha256 of a JSON-serialisable value in canonical form (sorted keys, no spaces): a training-data checksum."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_sha256(path: str | Path) -> str:
    """sha256 of a file's bytes, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


#: a compact classifier's low-rank adapters over its base encoder (compliance.models.classifier.ADAPTER_FILE)
ADAPTER_WEIGHTS = "adapter.safetensors"


def weights_sha256(model_dir: str | Path) -> str | None:
    """sha256 of a Hugging Face model directory's weight file (``model.safetensors`` or ``pytorch_model.bin``), or
    of a compact classifier's adapter file (its base encoder's weights are pinned by sha256 in its config); None
    for a hub id or a directory without weights. Cached per file, size and modification time."""
    path = Path(model_dir)
    if not path.is_dir():
        return None
    for name in (*WEIGHT_FILES, ADAPTER_WEIGHTS):
        f = path / name
        if f.is_file():
            stat = f.stat()
            return _cached_sha256(str(f.resolve()), stat.st_size, stat.st_mtime_ns)
    return None


@lru_cache(maxsize=32)
def _cached_sha256(path: str, size: int, mtime_ns: int) -> str:
    return file_sha256(path)


# -- config.json -----------------------------------------------------------------------------------------------
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


def write_config(
    path: str | Path,
    spec: ArtifactSpec,
    params: Mapping[str, Any],
    *,
    provenance: Mapping[str, Any] | None = None,
    package_version: str | None = None,
    sort_keys: bool = False,
) -> dict[str, Any]:
    """Write ``config.json``: the envelope (kind, format version, package version, provenance) and ``params``.

    Args:
        path: the artifact directory (created if needed).
        spec: the artifact kind.
        params: the artifact's own keys (must not use the envelope's names).
        provenance: checksums of what it was built from (training data, corpus, base model weights).
        package_version: the version that built it (default: this one).
        sort_keys: write the keys sorted (the indexes do, so that equal indexes have equal configs).

    Returns:
        The written configuration.
    """
    from compliance import __version__

    clash = set(ENVELOPE_KEYS) & set(params)
    if clash:
        raise ValueError(f"artifact parameters may not use the envelope keys {sorted(clash)}")
    data: dict[str, Any] = {
        "kind": spec.kind,
        "format_version": spec.format_version,
        "package_version": package_version or __version__,
        **params,
        "provenance": dict(provenance or {}),
    }
    directory = Path(path)
    directory.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2, ensure_ascii=False, sort_keys=sort_keys, default=str) + "\n"
    (directory / CONFIG_FILE).write_text(text, encoding="utf-8")
    return data


def read_config(path: str | Path, spec: ArtifactSpec) -> dict[str, Any]:
    """Read and check the ``config.json`` of an artifact directory, upgrading older formats.

    Raises:
        spec.missing_error: no config.json in ``path``.
        spec.error: unreadable, another kind, written by a newer version, or an old format that cannot be read.
    """
    directory = Path(path)
    cfg_path = directory / CONFIG_FILE
    if not cfg_path.is_file():
        raise spec.missing_error(f"no {spec.description} at {directory} (no {CONFIG_FILE}); {spec.rebuild}")
    try:
        data = json.loads(cfg_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise spec.error(
            f"{cfg_path}: cannot read the {spec.description}'s config ({e}); {spec.rebuild}"
        ) from e
    if not isinstance(data, dict):
        raise spec.error(f"{cfg_path}: not a {spec.description} config (not a JSON object); {spec.rebuild}")
    if spec.upgrade is not None and (data.get("kind") != spec.kind or _version(data) < spec.format_version):
        data = spec.upgrade(dict(data), directory)
    kind = data.get("kind")
    if kind != spec.kind:
        what = f"a {kind!r} artifact" if kind else "not an artifact of this package"
        raise spec.error(f"{directory} is {what}, not a {spec.description} ({spec.kind!r}); {spec.rebuild}")
    version = _version(data)
    if version > spec.format_version:
        raise spec.error(
            f"{directory}: {spec.description} written by a newer version of compliance "
            f"({data.get('package_version', '?')}, format {version}; this version reads up to format "
            f"{spec.format_version}): upgrade compliance, or {spec.rebuild}"
        )
    if version < spec.format_version:
        raise spec.error(
            f"{directory}: {spec.description} format {version} is no longer supported (current format "
            f"{spec.format_version}); {spec.rebuild}"
        )
    data.setdefault("provenance", {})
    return data


def _version(data: Mapping[str, Any]) -> int:
    value = data.get("format_version", 1)
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def write_card(path: str | Path, text: str) -> Path:
    """Write ``MODEL_CARD.md`` into the artifact directory; returns its path."""
    card = Path(path) / CARD_FILE
    card.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    return card


# -- retrieval indexes -----------------------------------------------------------------------------------------
INDEX_REBUILD = (
    "rebuild the index (the product's own indexes, under the index directory, are rebuilt on next use by "
    "`compliance search` and the alert runs)"
)


def _upgrade_index(kind: str) -> Upgrade:
    def upgrade(cfg: dict[str, Any], path: Path) -> dict[str, Any]:
        """Format 1 kept the corpus checksum (and the encoder identity) beside the parameters."""
        if cfg.get("kind") != kind or _version(cfg) != 1:
            return cfg
        provenance = {"corpus_checksum": cfg.pop("corpus_checksum", None)}
        if "encoder" in cfg:
            provenance["encoder"] = cfg.pop("encoder")
        return {**cfg, "format_version": 2, "provenance": provenance}

    return upgrade


def unversioned_upgrade(kind: str, to_version: int) -> Upgrade:
    """The upgrade of a kind whose first format had the same keys but no ``format_version`` and provenance."""

    def upgrade(cfg: dict[str, Any], path: Path) -> dict[str, Any]:
        if cfg.get("kind") != kind or "format_version" in cfg:
            return cfg
        return {**cfg, "format_version": to_version, "provenance": {}}

    return upgrade


def model_spec(
    kind: str, format_version: int, description: str, rebuild: str, upgrade: Upgrade | None = None
) -> ArtifactSpec:
    """The artifact kind of a trained model: :class:`~compliance.errors.ModelNotFoundError` when the directory
    is missing, :class:`~compliance.errors.ModelError` when it cannot be used."""
    from compliance.errors import ModelError, ModelNotFoundError

    return ArtifactSpec(
        kind=kind,
        format_version=format_version,
        description=description,
        rebuild=rebuild,
        error=ModelError,
        missing_error=ModelNotFoundError,
        upgrade=upgrade,
    )


def index_spec(kind: str, description: str) -> ArtifactSpec:
    """The artifact kind of a retrieval index (format 2; format-1 directories are upgraded on load)."""
    from compliance.errors import RetrievalError

    return ArtifactSpec(
        kind=kind,
        format_version=2,
        description=description,
        rebuild=INDEX_REBUILD,
        error=RetrievalError,
        missing_error=RetrievalError,
        upgrade=_upgrade_index(kind),
    )

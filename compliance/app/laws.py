"""Law use cases: install a law pack's official text, add a law file, list and show stored laws.

Storing a *new* law or law version is followed by an alert pass over the stored controls (which of them does
the new text concern?) for every caller — the CLI, the HTTP API, a worker or a Python program — unless the
caller asks for none (``alerts=False``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compliance.app.alerts import AlertRunOutcome, alerts_after_law_stored
from compliance.app.ingest import Upload

if TYPE_CHECKING:  # pragma: no cover
    from compliance.rules.corpus import Law
    from compliance.store import LawRecord, SavedLaw, Store

__all__ = ["LawStored", "add_law", "install_law", "law_detail", "list_laws", "store_law"]


@dataclass
class LawStored:
    """A law saved by :func:`store_law`, and the alert pass that followed (None when it was already stored
    unchanged, or alerts were not asked for)."""

    saved: SavedLaw
    alerts: AlertRunOutcome | None = None
    #: links re-opened because the provision they point to changed in this new version
    reopened: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = self.saved.to_dict()
        if self.alerts is not None:
            data["after_store"] = self.alerts.to_dict()
        if self.reopened:
            data["reopened_links"] = self.reopened
        return data


def store_law(
    store: Store,
    law: Law,
    *,
    kind: str = "law-install",
    config: dict[str, Any] | None = None,
    alerts: bool = True,
) -> LawStored:
    """Save ``law`` inside a recorded run of ``kind``; if it is new (a new law or a new version), run the alert
    pass over the stored controls (:func:`~compliance.app.alerts.alerts_after_law_stored`); a new version also
    re-opens the links to provisions whose text changed (:func:`~compliance.app.rescore.
    reopen_links_after_law_change`).

    Storing the same text again changes nothing and raises no alert.
    """
    with store.run(kind, config or {"source": law.source}) as run:
        saved = store.save_law(law)
        run.stats.update(
            {
                "law_id": saved.id,
                "short_name": saved.short_name,
                "identifier": saved.identifier,
                "version": saved.version,
                "created": saved.created,
                "provisions": saved.provision_count,
                "checksum": law.checksum,
            }
        )
    reopened: list[dict[str, Any]] = []
    if saved.created and saved.version > 1:
        from compliance.app.rescore import reopen_links_after_law_change

        reopened = reopen_links_after_law_change(store, saved.short_name, saved.version)
    outcome = (
        alerts_after_law_stored(store, saved.short_name, saved.version) if saved.created and alerts else None
    )
    return LawStored(saved, outcome, reopened)


def install_law(
    store: Store,
    name: str,
    *,
    from_path: Path | None = None,
    mirror: Path | None = None,
    verify: bool = True,
    alerts: bool = True,
) -> LawStored:
    """Install the law pack ``name`` (e.g. ``gdpr``): fetch the official text (local copy, mirror or download),
    check its checksum, parse it and store it.

    Raises:
        LawNotFoundError: no such pack.
        ChecksumMismatchError, DownloadError, CorpusFormatError: the official text could not be had or read.
    """
    from compliance.rules import install_pack

    law = install_pack(name, from_path=from_path, mirror=mirror, verify=verify)
    config = {
        "pack": name,
        "from": str(from_path) if from_path else None,
        "mirror": str(mirror) if mirror else None,
        "verify": verify,
        "source": law.source,
    }
    return store_law(store, law, kind="law-install", config=config, alerts=alerts)


def add_law(
    store: Store, source: Path | Upload, *, short_name: str | None = None, alerts: bool = True
) -> LawStored:
    """Add a law from a file or uploaded bytes (Formex XML, EU JSON, UK CLML) that no law pack covers.

    Raises:
        CorpusFormatError: unreadable, unsupported or malformed.
    """
    from compliance.rules import load_law_file

    if isinstance(source, Upload):
        law = load_law_file(source.name, data=source.data)
        label = source.name
    else:
        law = load_law_file(source)
        label = str(source)
    if short_name:
        law = replace(law, short_name=short_name.strip().lower())
    config = {"file": label, "short_name": short_name, "source": law.source}
    return store_law(store, law, kind="law-install", config=config, alerts=alerts)


def list_laws(store: Store, *, all_versions: bool = False) -> list[LawRecord]:
    """Stored laws (the latest version of each, or every version)."""
    return store.list_laws(all_versions=all_versions)


def law_detail(store: Store, name: str, version: int | None = None) -> dict[str, Any]:
    """A stored law (short name or identifier) as a JSON-ready document: metadata, counts, ``articles`` (number,
    title, key, chapter, text) and ``recitals`` in order.

    Raises:
        LawNotFoundError: no such law or version.
    """
    record = store.law_record(name, version)
    law = store.get_law(record.id)
    data = record.to_dict()
    articles = []
    for a in law.articles:
        chapter = law.chapter_of(a.key)
        articles.append(
            {
                "number": a.number,
                "title": a.title,
                "key": a.key,
                "chapter": chapter.number if chapter is not None else None,
                "text": law.text_of(a.key),
            }
        )
    data["articles"] = articles
    data["recitals"] = [{"number": r.number, "key": r.key, "text": r.text} for r in law.recitals]
    return data

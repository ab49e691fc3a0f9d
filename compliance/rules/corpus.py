"""The law corpus data model: a law and its provisions, independent of any file format or database.

Provisions form a tree through ``parent_key``: chapter → section → article → paragraph → point; recitals hang off
the law itself (``parent_key=None``). ``key`` is a stable path inside the law, e.g. ``chp:IV``, ``chp:IV/sec:2``,
``art:32``, ``art:32/par:1``, ``art:32/par:1/pt:a``, ``rec:75``. Article keys do not include their chapter so that
``art:32`` is stable whatever the structure above it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from typing import Literal

# "part" (added for UK Acts and EU titles) groups chapters, like a chapter groups sections.
ProvisionKind = Literal["part", "chapter", "section", "article", "paragraph", "point", "recital", "annex"]
Jurisdiction = Literal["EU", "UK", "INT", "OTHER"]


@dataclass(frozen=True, slots=True)
class Provision:
    """One unit of a law: chapter, section, article, numbered paragraph, point, recital or annex.

    ``text`` is the provision's *own* text: for a paragraph its wording with its points' text included (as
    printed); for an article with numbered paragraphs it is empty (use :meth:`Law.text_of`); for a chapter or
    section empty. ``number`` is as printed without decoration: ``"IV"``, ``"32"``, ``"1"``, ``"a"``, ``"75"``.
    """

    kind: ProvisionKind
    key: str
    number: str | None
    text: str
    title: str | None = None
    parent_key: str | None = None
    ordinal: int = 0


@dataclass(frozen=True, slots=True)
class Law:
    """A law (regulation, directive, act, statutory instrument) with its provisions in document order."""

    identifier: str  # CELEX for EU acts ("32016R0679"), legislation.gov.uk id for UK ("uksi/2003/2426")
    short_name: str  # "gdpr", "eprivacy" — unique, lower-case, used on the CLI
    title: str
    jurisdiction: Jurisdiction
    law_type: str  # "regulation", "directive", "act", "statutory-instrument", ...
    provisions: tuple[Provision, ...]
    date_adopted: date | None = None
    date_in_force: date | None = None
    version_date: date | None = None
    source: str = ""  # URL or file path it was read from
    source_format: str = ""  # "formex4", "eu-json", "clml"
    checksum: str = ""  # sha256 hex of the source bytes
    metadata: dict[str, str] = field(default_factory=dict)

    # -- navigation -------------------------------------------------------------------------------------------
    def by_kind(self, kind: ProvisionKind) -> list[Provision]:
        return [p for p in self.provisions if p.kind == kind]

    @property
    def articles(self) -> list[Provision]:
        return self.by_kind("article")

    @property
    def recitals(self) -> list[Provision]:
        return self.by_kind("recital")

    def get(self, key: str) -> Provision:
        for p in self.provisions:
            if p.key == key:
                return p
        raise KeyError(f"{self.short_name}: no provision {key!r}")

    def article(self, number: int | str) -> Provision:
        return self.get(f"art:{number}")

    def children(self, key: str | None) -> list[Provision]:
        return [p for p in self.provisions if p.parent_key == key]

    def descendants(self, key: str) -> Iterator[Provision]:
        for child in self.children(key):
            yield child
            yield from self.descendants(child.key)

    def text_of(self, key: str) -> str:
        """Full text of a provision: its own text followed by its numbered paragraphs' texts (points are
        already inside their paragraph's text); for a chapter or section, its descendants' texts."""
        prov = self.get(key)
        paragraphs = [c.text for c in self.children(key) if c.kind == "paragraph" and c.text]
        if prov.text:
            # an introductory text followed by numbered paragraphs: both belong to the provision
            return "\n".join([prov.text, *paragraphs])
        if not paragraphs:
            paragraphs = [d.text for d in self.descendants(key) if d.text]
        return "\n".join(paragraphs)

    def chapter_of(self, key: str) -> Provision | None:
        """The chapter that contains ``key`` (following parents), if any."""
        current: str | None = key
        while current is not None:
            prov = self.get(current)
            if prov.kind == "chapter":
                return prov
            current = prov.parent_key
        return None

"""Law packs: declarative YAML files describing an installable law (identity, dates, where its official text
comes from, its checksum, and editorial data such as the GDPR article↔recital map).

Packs live in ``compliance/rules/packs/*.yaml`` and ship with the package. They are validated with pydantic;
anything malformed raises :class:`~compliance.errors.LawPackError`.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from compliance.errors import LawNotFoundError, LawPackError
from compliance.rules.corpus import Jurisdiction, Law

__all__ = [
    "LawPack",
    "PackSource",
    "RecitalLink",
    "apply_pack_metadata",
    "get_pack",
    "list_packs",
    "load_pack_file",
]

SourceFormat = Literal["formex4", "eu-json", "clml"]
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_NAME = re.compile(r"^[a-z][a-z0-9_-]{1,39}$")


class PackSource(BaseModel):
    """One file a law can be installed from, in order of preference inside a pack."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str = Field(description="Path of the file inside a law mirror directory, e.g. 'gdpr/….xml'.")
    sha256: str = Field(
        description="sha256 (hex) of the file's bytes; downloads and --from files must match."
    )
    format: SourceFormat
    url: str | None = Field(default=None, description="Official download URL of exactly this file, if any.")
    description: str = ""

    @field_validator("sha256")
    @classmethod
    def _check_sha(cls, value: str) -> str:
        value = value.lower()
        if not _SHA256.match(value):
            raise ValueError("sha256 must be 64 hexadecimal characters")
        return value

    @field_validator("file")
    @classmethod
    def _check_file(cls, value: str) -> str:
        if value.startswith("/") or ".." in Path(value).parts:
            raise ValueError("file must be a relative path inside the mirror without '..'")
        return value

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("https://", "http://")):
            raise ValueError("url must be an http(s) URL")
        return value


class RecitalLink(BaseModel):
    """An editorial association of an article with a recital, with the reference sources that list it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    article: int = Field(ge=1)
    recital: int = Field(ge=1)
    sources: tuple[str, ...] = ()


class LawPack(BaseModel):
    """A validated law pack."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="Short name used on the CLI and as Law.short_name ('gdpr').")
    celex: str | None = Field(default=None, description="CELEX number for EU acts.")
    identifier: str | None = Field(default=None, description="Identifier for non-EU laws ('uksi/2003/2426').")
    title: str
    short_title: str | None = None
    jurisdiction: Jurisdiction
    law_type: str
    date_adopted: date | None = None
    date_in_force: date | None = None
    date_applicable: date | None = None
    eur_lex_url: str | None = Field(default=None, description="Human-readable official page.")
    sources: tuple[PackSource, ...] = Field(min_length=1)
    recital_sources: dict[str, str] = Field(
        default_factory=dict,
        description="Names of the editorial sources used in recital_links → description.",
    )
    recital_links: tuple[RecitalLink, ...] = ()
    license: str = ""

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError("name must be lower-case letters, digits, '-' or '_' (2-40 characters)")
        return value

    @model_validator(mode="after")
    def _check_consistency(self) -> LawPack:
        if not (self.celex or self.identifier):
            raise ValueError("a pack needs a celex or an identifier")
        unknown = {s for link in self.recital_links for s in link.sources} - set(self.recital_sources)
        if unknown:
            raise ValueError(f"recital_links name undeclared sources: {sorted(unknown)}")
        pairs = [(link.article, link.recital) for link in self.recital_links]
        if len(pairs) != len(set(pairs)):
            raise ValueError("recital_links contains duplicate article/recital pairs")
        return self

    # -- conveniences --------------------------------------------------------------------------------------------
    @property
    def law_identifier(self) -> str:
        """The identifier a Law from this pack carries (CELEX for EU acts)."""
        return self.celex or self.identifier or self.name

    @property
    def primary(self) -> PackSource:
        """The preferred source (first listed)."""
        return self.sources[0]

    @property
    def mirror_file(self) -> str:
        return self.primary.file

    @property
    def sha256(self) -> str:
        return self.primary.sha256

    @property
    def format(self) -> SourceFormat:
        return self.primary.format

    @property
    def official_url(self) -> str | None:
        """The first official download URL among the sources (``None`` if the text cannot be downloaded)."""
        return next((s.url for s in self.sources if s.url), None)

    def source_for_checksum(self, sha256: str) -> PackSource | None:
        """The source whose declared checksum is ``sha256``, if any."""
        return next((s for s in self.sources if s.sha256 == sha256.lower()), None)

    def recital_map(self) -> dict[int, list[int]]:
        """Article number → sorted recital numbers (editorial; empty for packs without a map)."""
        out: dict[int, list[int]] = {}
        for link in self.recital_links:
            out.setdefault(link.article, []).append(link.recital)
        return {article: sorted(recitals) for article, recitals in sorted(out.items())}

    def article_map(self) -> dict[int, list[int]]:
        """Recital number → sorted article numbers (the inverse of :meth:`recital_map`)."""
        out: dict[int, list[int]] = {}
        for link in self.recital_links:
            out.setdefault(link.recital, []).append(link.article)
        return {recital: sorted(articles) for recital, articles in sorted(out.items())}


def load_pack_file(path: Path | str, *, text: str | None = None) -> LawPack:
    """Read and validate one pack file.

    Raises:
        LawPackError: the YAML is unreadable, not a mapping, or fails validation.
    """
    import yaml

    name = str(path)
    try:
        raw = text if text is not None else Path(path).read_text(encoding="utf-8")
        data = yaml.safe_load(raw)
    except (OSError, UnicodeDecodeError) as e:
        raise LawPackError(f"law pack {name}: cannot read: {e}") from e
    except yaml.YAMLError as e:
        raise LawPackError(f"law pack {name}: invalid YAML: {e}") from e
    if not isinstance(data, dict):
        raise LawPackError(f"law pack {name}: expected a mapping at the top level, got {type(data).__name__}")
    try:
        return LawPack.model_validate(data)
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(pack)'}: {err['msg']}" for err in e.errors()
        )
        raise LawPackError(f"law pack {name}: {problems}") from e


@lru_cache(maxsize=1)
def _packs() -> dict[str, LawPack]:
    packs: dict[str, LawPack] = {}
    folder = resources.files("compliance.rules") / "packs"
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith((".yaml", ".yml")):
            continue
        pack = load_pack_file(entry.name, text=entry.read_text(encoding="utf-8"))
        if pack.name in packs:
            raise LawPackError(f"law pack {entry.name}: name {pack.name!r} is used by another pack")
        packs[pack.name] = pack
    return packs


def list_packs() -> list[LawPack]:
    """All packs shipped with the package, sorted by name."""
    return [pack for _, pack in sorted(_packs().items())]


def get_pack(name: str) -> LawPack:
    """The pack called ``name`` (case-insensitive).

    Raises:
        LawNotFoundError: no such pack (the message lists the known ones).
    """
    packs = _packs()
    pack = packs.get(name.strip().lower())
    if pack is None:
        raise LawNotFoundError(f"no law pack named {name!r}; known packs: {', '.join(sorted(packs))}")
    return pack


def find_pack_for(identifier: str) -> LawPack | None:
    """The pack whose CELEX/identifier is ``identifier`` (consolidated CELEX ``0…`` matches too), if any."""
    ident = identifier.strip().upper()
    for pack in _packs().values():
        if pack.law_identifier.upper() == ident:
            return pack
    base = ident[1:].split("-", 1)[0] if ident.startswith("0") else None
    if base:
        for pack in _packs().values():
            if pack.celex and pack.celex.upper() in (f"3{base}", ident):
                return pack
    return None


def apply_pack_metadata(law: Law, pack: LawPack) -> Law:
    """``law`` with the pack's identity (identifier, short name, title, type) and dates.

    Dates read from an official file (Formex, CLML) win over the pack's; the pack fills the gaps. For EU JSON,
    whose ``effective_date`` mixes entry into force and application, the pack's dates win.
    """
    official = law.source_format in ("formex4", "clml")

    def pick(from_file: date | None, from_pack: date | None) -> date | None:
        first, second = (from_file, from_pack) if official else (from_pack, from_file)
        return first or second

    metadata = dict(law.metadata)
    metadata["pack"] = pack.name
    if pack.short_title:
        metadata["short_title"] = pack.short_title
    if pack.eur_lex_url:
        metadata["eur_lex_url"] = pack.eur_lex_url
    if pack.date_applicable and not (official and metadata.get("date_applicable")):
        metadata["date_applicable"] = pack.date_applicable.isoformat()
    source_entry = pack.source_for_checksum(law.checksum) if law.checksum else None
    if source_entry is not None:
        metadata["pack_source_file"] = source_entry.file
    return replace(
        law,
        identifier=pack.law_identifier,
        short_name=pack.name,
        title=pack.title,
        jurisdiction=pack.jurisdiction,
        law_type=pack.law_type,
        date_adopted=pick(law.date_adopted, pack.date_adopted),
        date_in_force=pick(law.date_in_force, pack.date_in_force),
        metadata=metadata,
    )

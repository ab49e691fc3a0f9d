"""Documents from the law corpus: a law's articles, numbered paragraphs, recitals or the whole law."""

from __future__ import annotations

from datetime import date
from typing import Literal

from compliance.retrieval.types import Document
from compliance.rules.corpus import Law

__all__ = ["law_date", "law_documents"]

Level = Literal["article", "paragraph", "law"]


def law_date(law: Law) -> date | None:
    """The date the date filter uses for a law: in force, else adopted, else version date."""
    return law.date_in_force or law.date_adopted or law.version_date


def law_documents(law: Law, level: Level = "article", include_recitals: bool = False) -> list[Document]:
    """Turn a law into retrievable documents.

    Args:
        law: the parsed law.
        level: ``article`` (full article text, title first), ``paragraph`` (numbered paragraphs; articles
            without numbered paragraphs as a whole), or ``law`` (one document: title and all articles).
        include_recitals: also add one document per recital.

    Returns:
        documents with ids ``"<short_name>/<key>"`` (``"<short_name>"`` at ``law`` level) and metadata
        ``law``, ``key``, ``kind``, ``title``, ``number``.
    """
    when = law_date(law)
    docs: list[Document] = []

    def make(key: str, kind: str, text: str, title: str | None, number: str | None) -> Document:
        return Document(
            id=f"{law.short_name}/{key}",
            text=text,
            metadata={
                "law": law.short_name,
                "key": key,
                "kind": kind,
                "title": title or "",
                "number": number or "",
            },
            date=when,
        )

    if level == "law":
        parts = [law.title] + [f"{a.title or ''}\n{law.text_of(a.key)}".strip() for a in law.articles]
        docs.append(
            Document(
                id=law.short_name,
                text="\n\n".join(p for p in parts if p),
                metadata={"law": law.short_name, "key": "", "kind": "law", "title": law.title},
                date=when,
            )
        )
    else:
        for art in law.articles:
            paragraphs = [c for c in law.children(art.key) if c.kind == "paragraph" and c.text]
            if level == "paragraph" and paragraphs:
                for par in paragraphs:
                    text = f"{art.title or ''}\n{par.text}".strip()
                    docs.append(make(par.key, "paragraph", text, art.title, par.number))
            else:
                text = f"{art.title or ''}\n{law.text_of(art.key)}".strip()
                docs.append(make(art.key, "article", text, art.title, art.number))
    if include_recitals:
        for rec in law.recitals:
            docs.append(make(rec.key, "recital", rec.text, rec.title, rec.number))
    return docs

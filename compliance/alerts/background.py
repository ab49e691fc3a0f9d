"""General legal language: what a control may resemble without being concerned by a new act.

A control paragraph's similarity with a new act's provisions mixes two things: how close it is to *this* act, and
how much it reads like legal text at all. A record-of-processing row ("Purpose: …; Personal data: …; Legal basis:
…") or a key:value table resembles the definitions and scope clauses of any act about as much as it resembles the
new one, and used to rank among the first alerts of every act. The alert ranking therefore subtracts a share of
each candidate's highest cosine with text from acts of other fields (:attr:`AlertConfig.background_weight
<compliance.alerts.engine.AlertConfig.background_weight>`): the same text the classifier's training mines for
hard negatives (:func:`compliance.models.data.negative_candidates`: the units of investment-fund, financial-
instrument, payment-services and radio-equipment law that do not mention personal data, data protection, privacy
or data subjects).

The acts are law packs, read like every other pack (:func:`compliance.rules.fetch.load_pack_law`, cached per
process): from the law mirror, since EUR-Lex publishes no file in these packs' format. One that cannot be read is
logged once per process and left out (each alert lists the acts read, ``background_acts``); with none the ranking
is the one without the correction. Their vectors are cached per encoder like a law's
passages (:func:`compliance.alerts.engine._law_vectors`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from compliance.errors import ComplianceError

__all__ = ["DEFAULT_BACKGROUND_ACTS", "DEFAULT_BACKGROUND_UNITS", "BackgroundText", "background_text"]

logger = logging.getLogger(__name__)

#: law packs of fields other than data protection and cybersecurity (the training's hard-negative acts)
DEFAULT_BACKGROUND_ACTS: tuple[str, ...] = ("aifmd", "mifid2", "psd2", "red")
#: at most this many units, evenly spaced over the acts' units (all four give 3,790; embedding them all took about
#: 30 s on two cores, a thousand about a quarter of it, with the same gain on the labelled alert sets)
DEFAULT_BACKGROUND_UNITS = 1000


#: acts that could not be read in this process (no mirror and no network, an unknown pack)
_UNREADABLE: set[str] = set()


@dataclass(frozen=True, slots=True)
class BackgroundText:
    """The units of general legal language, and which acts gave them and which could not be read."""

    texts: tuple[str, ...]
    acts: tuple[str, ...]
    missing: tuple[str, ...] = ()


def background_text(
    acts: Sequence[str], *, exclude: Iterable[str] = (), limit: int | None = DEFAULT_BACKGROUND_UNITS
) -> BackgroundText:
    """The units of ``acts`` (pack names) outside the GDPR's material scope, in act and article order, each text
    once, and at most ``limit`` of them, evenly spaced (the first, then every ``len / limit``-th); an act named in
    ``exclude`` (pack names or CELEX identifiers: the act being alerted on is never its own background) is
    skipped, one that cannot be read (not in the law mirror, an unknown pack) is logged and listed in ``missing``."""
    from compliance.models.data import negative_candidates
    from compliance.rules.fetch import load_pack_law
    from compliance.rules.packs import get_pack

    skip = {e.lower() for e in exclude}
    texts: dict[str, None] = {}
    used: list[str] = []
    missing: list[str] = []
    for name in acts:
        if name in _UNREADABLE:  # tried in this process already: no second download attempt per run
            missing.append(name)
            continue
        try:
            pack = get_pack(name)
            if name.lower() in skip or (pack.celex or "").lower() in skip:
                continue
            law = load_pack_law(name)
        except ComplianceError as exc:
            logger.warning("background act %s left out of the alert ranking: %s", name, exc)
            _UNREADABLE.add(name)
            missing.append(name)
            continue
        texts.update(dict.fromkeys(negative_candidates(law)))
        used.append(name)
    units = list(texts)
    if limit is not None and 0 < limit < len(units):
        step = len(units) / limit
        units = [units[int(i * step)] for i in range(limit)]
    return BackgroundText(tuple(units), tuple(used), tuple(missing))

"""Classifier → scored links: turn the GDPR article classifier's calibrated ranking of a paragraph into the
paragraph ↔ article links the store keeps, with a status from the model's review band.

* the top-1 article with a score ≥ the band's upper edge → ``proposed``; with ``own_evidence`` (the default), a
  principle umbrella (Art. 5) counts only its *own* evidence, its score before its member articles gave it a share
  of theirs (:func:`own_evidence`): an umbrella at the top on borrowed mass is not proposed, and the next article may be, on
  its own evidence;
* any top-k article with a score in ``[low, high)`` → ``needs-review``;
* articles below ``low`` are not linked, except the top-1 of a paragraph for which nothing reached ``low``:
  it is stored as ``needs-review`` with ``evidence.abstain = true`` so that a reviewer sees the paragraph;
* with a corroboration level (the audit's default, :func:`corroborate_links`), a proposal also needs the text's
  own evidence of the article: the paragraph's cosine with the article's closest paragraph or point, in the
  classifier encoder's space, at or above the link decision's ``drop`` edge. A top article below it stays linked
  for review, never proposed.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypedDict

from compliance.errors import ConfigurationError, require_weight
from compliance.linking.specific import SpecificFirstConfig, specific_first_order
from compliance.rules.addressees import AUTHORITY_WEIGHT
from compliance.rules.addressees import defines_terms as _defines_title

if TYPE_CHECKING:  # pragma: no cover
    from compliance.models.classifier import ArticleClassifier, ArticleScore
    from compliance.runtime import EmbeddingSpace

__all__ = [
    "ClassifierLinkConfig",
    "ParagraphLinks",
    "classifiable",
    "classify_paragraphs",
    "corroborate_links",
    "decide_links",
    "defines_terms",
    "link_status",
    "own_evidence",
    "specific_first_links",
]

METHOD = "classifier"


def defines_terms(score: ArticleScore) -> bool:
    """Whether the article defines the act's terms (its title says "Definitions",
    :func:`compliance.rules.addressees.defines_terms`): a text that uses a defined term ("personal data",
    "consent", "processor") does not implement the definition, so such an article is held for review, never
    proposed, unless ``ClassifierLinkConfig.propose_definitions``."""
    return _defines_title(score.title)


class StatusRules(TypedDict):
    """The status rules of :class:`ClassifierLinkConfig`, as :func:`decide_links` takes them."""

    own_evidence: bool
    propose_definitions: bool


@dataclass(frozen=True)
class ClassifierLinkConfig:
    """How classifier scores become links. Stored with every audit run.

    Attributes:
        top_k: at most this many articles linked per paragraph.
        review_band: ``(low, high)``; None = the model's calibrated band.
        batch_size: paragraphs classified per batch; the encoder runs the classifier's own window batches within
            it, sorted by token length, so a larger batch pads less (an audit's forward at 256: 13 % faster than at
            64 on the sample policies, docs/performance.md).
        min_words: paragraphs with fewer words (headings, page furniture) are not classified.
        specific_first: re-rank each document's rankings so that general articles (Art. 5, 24) do not crowd out
            the specific one (:mod:`compliance.linking.specific`); None (default) keeps the classifier's order.
        own_evidence: decide ``proposed`` on each article's own evidence, a principle umbrella's score before its
            member articles gave it a share of theirs (:func:`decide_links`); False: on the score, rank 1 only.
        corroborate: an article is proposed only when the paragraph's cosine with its closest paragraph or point
            (the classifier's encoder, the audit's own forward pass) reaches the shipped link decision's ``drop``
            edge — below it the calibrated bi-encoder finds the two unrelated (:func:`corroborate_links`); applied
            where the link decision was calibrated on the classifier's encoder (the shipped one is). The cosine is
            kept in ``evidence.components.text_cosine``. False: the classifier's scores alone decide.
        propose_definitions: an article that defines the act's terms (GDPR Art. 4) may be proposed; False
            (default): it is held for review and, with ``own_evidence``, passed over like an umbrella on borrowed
            mass (:func:`defines_terms`).
        provision_authority_weight: when the paragraph or point within a linked article is picked, one whose
            duties fall on public bodies only (Art. 28(8): "A supervisory authority may adopt standard contractual
            clauses") has its score multiplied by this, so that the provision obliging the organisation is named
            (:class:`~compliance.linking.provisions.ProvisionPicker`); 1: no addressee is read.
        propose_public_duties: an article may be proposed when the paragraph or point of it that fits the text best
            obliges public bodies only (Art. 58(1)(e), a supervisory authority's power "to obtain … access to all
            personal data", for a multi-factor authentication rule; Art. 35(5), the authority's list of processing
            that needs no assessment, for a marketing call list); False (default): such a link is held for review —
            a policy does not implement a supervisory authority's or a Member State's duty.
        lead_in_context: an item of a list that follows a lead-in ("Supplier undertakes the following as
            Processor:") is classified with the lead-in's last sentence before it (:mod:`compliance.connectors.
            lists`), since the item alone has lost who is bound and how; its stored vectors stay its own text's.
            False: every paragraph is read alone.
        document_abbreviations: a paragraph is classified with the abbreviations its document defines
            ("Data Processing Agreement (DPA)", a glossary's "DSAR: data subject access request";
            :func:`compliance.abbreviations.defined_abbreviations`) written out after their first use, as
            the classifier writes out the ones it knows (:attr:`~compliance.models.classifier.ClassifierConfig.
            abbreviations`); the abbreviations read so are kept in ``evidence.abbreviations`` and the stored vectors
            stay the paragraph's own text's. False: only the classifier's own.
        languages: the languages the classifier reads (ISO 639-1 codes): a paragraph confidently written in another
            (:func:`compliance.linking.language.other_language`) is not mapped by the audit and is counted apart —
            the shipped classifier, trained on the GDPR's English text, ranked a French retention rule Art. 36 at
            0.88. Empty: every paragraph is mapped, whatever its language.
    """

    top_k: int = 5
    review_band: tuple[float, float] | None = None
    batch_size: int = 256
    min_words: int = 4
    specific_first: SpecificFirstConfig | None = None
    own_evidence: bool = True
    corroborate: bool = True
    propose_definitions: bool = False
    provision_authority_weight: float = AUTHORITY_WEIGHT
    propose_public_duties: bool = False
    lead_in_context: bool = True
    document_abbreviations: bool = True
    languages: tuple[str, ...] = ("en",)

    def status_rules(self) -> StatusRules:
        """The keyword arguments of :func:`decide_links` (and the functions that decide statuses again) these
        settings choose."""
        return {"own_evidence": self.own_evidence, "propose_definitions": self.propose_definitions}

    def __post_init__(self) -> None:
        if not 1 <= self.top_k <= 99:
            raise ConfigurationError(f"top_k must be in 1..99, got {self.top_k}")
        require_weight("provision_authority_weight", self.provision_authority_weight)
        if self.review_band is not None and not 0.0 <= self.review_band[0] <= self.review_band[1] <= 1.0:
            raise ConfigurationError(
                f"review band must satisfy 0 <= low <= high <= 1, got {self.review_band}"
            )


@dataclass(frozen=True)
class ParagraphLinks:
    """The links proposed for one paragraph (``vectors``: its chunk vectors in the embedding space asked for,
    from the same forward pass, None when none was asked for; ``embedding``: its L2-normalised embedding by the
    classifier's encoder from that pass, :attr:`ForwardPass.embeddings`)."""

    paragraph_id: int
    ranked: tuple[ArticleScore, ...]
    linked: tuple[tuple[ArticleScore, str], ...]  # (article score, status)
    needs_review: bool
    abstained: bool
    vectors: Any = None
    embedding: Any = None


def link_status(score: float, rank: int, band: tuple[float, float]) -> str | None:
    """``proposed``, ``needs-review`` or None (not linked) for an article at ``rank`` with ``score``."""
    low, high = band
    if score >= high and rank == 1:
        return "proposed"
    if score >= low:
        return "needs-review"
    return None


def own_evidence(score: ArticleScore) -> float:
    """What the text says of the article itself: for a principle umbrella, its score before the umbrellas gave it
    a share of its members' mass (``components["own"]``; links stored before that component existed: the score
    less the ``umbrella`` share); for any other article, its score. Art. 5 GDPR receives 0.75 × the probability of
    the articles implementing its principles (Art. 6, 7, 32 …, :mod:`compliance.models.umbrella`) — right for
    ranking, since decisions cite Art. 5 beside them, but no ground to *propose* Art. 5 for a cookie banner whose
    own probability for it is 0.01. Components are present only when ranked with ``explain=True``."""
    components = score.components or {}
    share = components.get("umbrella", 0.0)
    if not share:
        return score.score
    return components.get("own", score.score * (1.0 - share))


_own = own_evidence  # the function, under a name the keyword argument of decide_links does not shadow


def classifiable(text: str, config: ClassifierLinkConfig) -> bool:
    """Whether a paragraph is long enough to be classified (``config.min_words``)."""
    return len(text.split()) >= config.min_words


def classify_paragraphs(
    classifier: ArticleClassifier,
    paragraphs: Sequence[tuple[int, str]],
    config: ClassifierLinkConfig,
    *,
    space: EmbeddingSpace | None = None,
    progress: bool = True,
    one_document: bool = True,
    plain: Mapping[int, str] | None = None,
) -> list[ParagraphLinks]:
    """Classify ``(paragraph_id, text)`` pairs and decide their links (paragraphs too short are skipped).

    With ``space`` (the embedding space of a dense index over the same encoder), each result also carries the
    paragraph's chunk vectors in that space, from the same forward pass (:meth:`ArticleClassifier.forward`).
    ``plain`` (paragraph id → its own text) names the paragraphs classified with words of their context (a list
    item read after its lead-in): their vectors in ``space`` come from a forward pass over their own text, so the
    controls index holds the paragraph, not the context.
    ``progress=False`` shows no bar (the caller counts). With ``config.specific_first``, the paragraphs are taken
    as one document's and re-ranked so (:func:`specific_first_links`); ``one_document=False`` (paragraphs of many
    documents in one batch) leaves that to the caller, per document.
    """
    import contextlib

    from compliance.progress import bar

    band = config.review_band or classifier.config.review_band
    todo = [(pid, text) for pid, text in paragraphs if classifiable(text, config)]
    out: list[ParagraphLinks] = []
    shown_bar = bar(len(todo), desc="classifying paragraphs", unit="para") if progress else None
    with shown_bar if shown_bar is not None else contextlib.nullcontext() as shown:
        for start in range(0, len(todo), config.batch_size):
            chunk = todo[start : start + config.batch_size]
            texts = [t for _, t in chunk]
            # a paragraph read with its context: its own text's vectors come from the same pass
            own = (
                [i for i, (pid, _) in enumerate(chunk) if plain and pid in plain] if space is not None else []
            )
            if own:
                assert plain is not None
                result = classifier.forward(texts, space, also=[plain[chunk[i][0]] for i in own])
            else:
                result = classifier.forward(texts, space)
            ranked = classifier.rank(texts, top_k=config.top_k, explain=True, logits=result.logits)
            vectors: list[Any] = list(result.vectors) if result.vectors is not None else [None] * len(chunk)
            for i, vecs in zip(own, vectors[len(chunk) :], strict=True):
                vectors[i] = vecs
            del vectors[len(chunk) :]
            embeddings: list[Any] = (
                list(result.embeddings) if result.embeddings is not None else [None] * len(chunk)
            )
            for (pid, _), scores, vecs, emb in zip(chunk, ranked, vectors, embeddings, strict=True):
                out.append(decide_links(pid, scores, band, vecs, emb, **config.status_rules()))
            if shown is not None:
                shown.update(len(chunk))
    if one_document and config.specific_first is not None:
        out = specific_first_links(out, config.specific_first, band, **config.status_rules())
    return out


def decide_links(
    paragraph_id: int,
    scores: Sequence[ArticleScore],
    band: tuple[float, float],
    vectors: Any = None,
    embedding: Any = None,
    *,
    own_evidence: bool = True,
    corroborated: Callable[[ArticleScore], bool] | None = None,
    propose_definitions: bool = False,
) -> ParagraphLinks:
    """One paragraph's links from its ranked articles (best first): each article's status by its score and rank,
    and the top article for review when none qualifies (the paragraph abstains).

    ``own_evidence``: the article proposed is the first whose own evidence (:func:`own_evidence`) reaches the
    band's upper edge, passing over only principle umbrellas above it that do not (an umbrella's score is mostly
    its members'; the specific article below it is what the text names). The ranking is unchanged; an umbrella
    passed over stays linked for review when its score is inside the band. False: the top article, on its score.

    ``corroborated``: whether the text itself bears the article out (:func:`corroborate_links`); the article that
    would be proposed and is not borne out stays linked for review, and nothing below it is proposed.

    ``propose_definitions`` False: an article defining the act's terms (:func:`defines_terms`) is never proposed;
    with ``own_evidence`` it is passed over and the article below it may be proposed on its own evidence.
    """
    if not own_evidence:
        linked = [(s, st) for s in scores if (st := link_status(s.score, s.rank, band)) is not None]
        held = [
            (corroborated is not None and not corroborated(s))
            or (not propose_definitions and defines_terms(s))
            for s, _ in linked
        ]
        linked = [
            (s, "needs-review" if st == "proposed" and h else st)
            for (s, st), h in zip(linked, held, strict=True)
        ]
    else:
        low, high = band
        chosen: int | None = None
        for i, s in enumerate(scores):
            if not propose_definitions and defines_terms(s):
                continue  # a definition explains a term the text uses: passed over, kept for review
            if _own(s) >= high:
                if corroborated is None or corroborated(s):
                    chosen = i
                break
            if not (s.components or {}).get("umbrella"):
                break  # a specific article that is not proposed: nothing below it is
        linked = []
        for i, s in enumerate(scores):
            if i == chosen:
                linked.append((s, "proposed"))
            elif s.score >= low:
                linked.append((s, "needs-review"))
    abstained = not linked
    if abstained:
        linked = [(scores[0], "needs-review")]
    needs_review = not any(st == "proposed" for _, st in linked)
    return ParagraphLinks(
        paragraph_id, tuple(scores), tuple(linked), needs_review, abstained, vectors, embedding
    )


def corroborate_links(
    result: ParagraphLinks,
    band: tuple[float, float],
    cosines: Mapping[int, float],
    level: float,
    *,
    own_evidence: bool = True,
    propose_definitions: bool = False,
    held: Collection[int] = (),
) -> ParagraphLinks:
    """``result``'s links decided again with the text's own evidence of each article: ``cosines`` (article →
    the paragraph's cosine with the article's closest paragraph or point, in the link decision's embedding space)
    are kept in each ranked article's ``components["text_cosine"]``, and an article whose cosine is below
    ``level`` — the link decision's ``drop`` edge: its calibrated bi-encoder finds the paragraph and the passage
    unrelated — is not proposed (it stays linked for review). An article without a cosine is not judged. The
    articles in ``held`` are not proposed either (the audit's: those whose best-fitting provision obliges public
    bodies only).

    Why: the classifier's ensemble multiplies three experts and renormalises over 99 articles, so an article that
    none of them rejects outright can reach a high score on weak evidence from each — an off-topic paragraph of a
    software manual is proposed for Art. 28 at 0.56; "We may update this notice when the law changes" for Art. 35
    at 0.96 (the encoder gives it 0.07). The bi-encoder looks at the text and the law's own words together.
    """
    scores = [
        replace(s, components={**(s.components or {}), "text_cosine": round(float(c), 4)})
        if (c := cosines.get(s.article)) is not None
        else s
        for s in result.ranked
    ]

    def borne_out(score: ArticleScore) -> bool:
        cosine = cosines.get(score.article)
        return score.article not in held and (cosine is None or cosine >= level)

    return decide_links(
        result.paragraph_id,
        scores,
        band,
        result.vectors,
        result.embedding,
        own_evidence=own_evidence,
        corroborated=borne_out,
        propose_definitions=propose_definitions,
    )


def specific_first_links(
    results: Sequence[ParagraphLinks],
    config: SpecificFirstConfig,
    band: tuple[float, float],
    *,
    own_evidence: bool = True,
    propose_definitions: bool = False,
) -> list[ParagraphLinks]:
    """One document's paragraph links re-ranked specific before general (:func:`specific_first_order`), their
    statuses decided again on the new ranks."""
    if not results:
        return list(results)
    orders = specific_first_order([[(s.article, s.score) for s in r.ranked] for r in results], config)
    out: list[ParagraphLinks] = []
    for r, order in zip(results, orders, strict=True):
        scores = [replace(r.ranked[i], rank=rank) for rank, i in enumerate(order, start=1)]
        out.append(
            decide_links(
                r.paragraph_id,
                scores,
                band,
                r.vectors,
                r.embedding,
                own_evidence=own_evidence,
                propose_definitions=propose_definitions,
            )
        )
    return out

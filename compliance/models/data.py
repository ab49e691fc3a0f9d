"""Training and held-out data for the 99-way GDPR article classifier (seed 000, §4.2).

Every article is turned into *units*: its sentences, with enumerated points flattened into "premise + point"
(the seed's refactoring of point lists), and its title. A deterministic hash of each unit's text moves a share
of the units of every article to two held-out sets, never used for training: ``calibration`` (temperature
scaling, model selection) and ``qa`` (the QA query set). Recitals are split the same way by recital number into
``train`` (used by the ``-r`` recipes), ``calibration`` and ``qr`` (the QR query set).

The training examples then follow the *unigram with parameterized emphasis on the title* labeling scheme: the
group of an article is its training units plus ``title_replicas`` copies of its title (and, with recital
enrichment, the sentences of its training recitals); the group is walked round-robin until ``min_k`` examples
exist for the article (articles with more units keep them all), so that long and short articles contribute in
balance.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from compliance.errors import ConfigurationError
from compliance.models.restate import restate
from compliance.rules.corpus import Law

if TYPE_CHECKING:
    from compliance.models.lexical import LexicalArticleScorer

__all__ = [
    "ArticleUnits",
    "DataConfig",
    "Example",
    "TrainingData",
    "align_recital_sentences",
    "article_units",
    "build_training_data",
    "load_extra_examples",
    "mine_negatives",
    "negative_candidates",
    "parallel_units",
    "provision_units",
    "recital_map_checksum",
    "restated_units",
    "split_sentences",
]

#: a sentence within the GDPR's material scope (Art. 2(1): the processing of personal data) or naming the data
#: protection acts: never a mined negative, whatever act it comes from
_PERSONAL_DATA = re.compile(
    r"\bpersonal data\b|\bdata protection\b|\bprivacy\b|\bdata subjects?\b|\b2016/679\b|\b95/46\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(‘'\"“])")
_POINT = re.compile(r"^\(([a-z]{1,4}|\d{1,2})\)\s+")


@dataclass(frozen=True)
class DataConfig:
    """How training data is built. Stored with every trained model.

    Attributes:
        min_k: minimum number of training instances per article (round-robin replicas).
        title_replicas: copies of the article title in each article's group (title emphasis).
        recitals: add the sentences of each article's (training) recitals to its group (``-r``).
        heldout_share: share of units per article held out for calibration and for QA (each).
        recital_heldout_share: share of recitals held out for calibration and for QR (each).
        min_units_for_heldout: articles with fewer units than this keep all of them for training.
        extra_weight: how many times each extra supervised example is repeated.
        seed: salt of the deterministic held-out hash.
        parallel_acts: law packs that restate the GDPR's provisions for another field (the Law Enforcement
            Directive, ``led``): the units of each of their articles whose title is the title of exactly one
            GDPR article join that article's group, as paraphrases of it in other words (training only).
        parallel_provisions: articles of other acts that state a GDPR article's duty for another field under
            another title, as ``(law pack, its article number, GDPR article)``: their units join that article's
            group and its lexical document like ``parallel_acts``' (:func:`provision_units`: units that oblige
            public bodies only, such as the Commission's implementing acts, left out).
        lexical_provisions: the same, for the lexical expert's document of the article only (the encoder is
            not trained on them): ``("nis2", 21, 32)`` gives Art. 32 NIS2's list of cybersecurity
            risk-management measures — backup and business continuity, vulnerability handling, cryptography,
            access control, multi-factor authentication, human-resources security — the words of security
            controls that the GDPR's own article leaves to "appropriate technical and organisational measures".
        lexical_recitals: the recitals that explain each of those provisions (``parallel_provisions`` and
            ``lexical_provisions``; the act's law pack's article ↔ recital map, ``LawPack.recital_map``) join the
            GDPR article's lexical document too (the encoder is not trained on them). NIS2's recitals 77–89 on
            cybersecurity risk-management measures name what its Art. 21 lists in general terms: zero-trust
            principles, software updates, device configuration, network segmentation, identity and access
            management, physical and environmental security, suppliers. Like the GDPR's recital enrichment, the
            recitals say in other words what the article obliges.
        parallel_recitals: the recitals that explain each of the ``parallel_provisions`` (as ``lexical_recitals``
            reads them) are training text of the GDPR article too, beside the provision's units: the encoder, not
            only the lexical expert, learns what "appropriate technical and organisational measures" are in the
            words of NIS2's recitals 77-89 (network segmentation, software updates, identity and access management,
            physical security, suppliers, penetration testing).
        negative_acts: law packs of fields other than data protection (financial, radio equipment law): their
            sentences that do not speak of personal data become *hard negatives* — each penalised, with an
            unlikelihood term, on the GDPR article the lexical expert gives it most confidently, where that
            article takes at least ``negative_min_share`` of the expert's mass (a word used there in another sense:
            "hours", "list", "significant change"). Training only; none of these texts has a positive label.
        negative_min_share: the lexical expert's probability a mined negative's article must reach.
        negatives_per_article: at most this many mined negatives per article (the most confident ones).
        negative_weight: weight of the mined negatives' unlikelihood term in the training loss.
        restated: add each training unit restated in the words of an organisation's policies
            (:func:`compliance.models.restate.restate`: "we" for the controller, "supplier" for the processor,
            "privacy notice", "DPIA", "must") to its article's group and to the lexical expert's documents, beside
            the original (training only; the held-out sets are the law's own sentences).
        public_duties: the training sentences of an article that address public bodies only
            (:func:`compliance.rules.addressees.addresses_public_bodies`: "The supervisory authority shall establish
            and make public a list of the kind of processing operations …", Art. 35(4)) are training text of their
            article. False leaves them out of the article's encoder group and lexical document where they are
            fewer than half of its training sentences (an article that speaks mostly to public bodies, Art. 45 or 51-59,
            keeps them all); the held-out sets are unchanged.
        keyword_negatives: each training sentence of an article with at least twice this many distinct words
            (stop words and numbers aside) is also a negative of that article with only its this many rarest
            words across the articles' lexical documents, in the sentence's order (:func:`keyword_texts`:
            "provide copy undergoing" of Art. 15(3), "list kind impact" of Art. 35(4)): an article's words without
            their sentence must not be enough to give it, as an unlikelihood term like ``negative_acts``'
            (keyword-only inputs, after MASKER). 0: none.
        recital_alignment: a recital the map pairs with several articles gives each of its sentences only to the
            articles whose own text the sentence matches best: BM25 over each article's title and training
            units (:func:`align_recital_sentences`), every article whose score reaches this share of the best
            one's; a sentence that shares no term with any of them goes to all, as before. 0: every sentence to
            every article of its recital (seed 000's enrichment). Recital 39 is paired with Arts. 5, 6 and 30;
            its sentence on time limits for erasure taught Art. 30 what storage limitation (Art. 5(1)(e)) is,
            and recital 65's sentences on erasure taught Art. 16 (rectification) as much as Art. 17.
    """

    min_k: int = 64
    title_replicas: int = 2
    recitals: bool = True
    heldout_share: float = 0.1
    recital_heldout_share: float = 0.15
    min_units_for_heldout: int = 4
    extra_weight: int = 1
    seed: int = 13
    parallel_acts: tuple[str, ...] = ()
    parallel_provisions: tuple[tuple[str, int, int], ...] = ()
    lexical_provisions: tuple[tuple[str, int, int], ...] = ()
    lexical_recitals: bool = False
    parallel_recitals: bool = False
    negative_acts: tuple[str, ...] = ()
    negative_min_share: float = 0.5
    negatives_per_article: int = 16
    negative_weight: float = 1.0
    restated: bool = False
    public_duties: bool = True
    keyword_negatives: int = 0
    recital_alignment: float = 0.0

    def __post_init__(self) -> None:
        if self.min_k < 1:
            raise ConfigurationError(f"min_k must be at least 1, got {self.min_k}")
        if not 0.0 <= self.heldout_share < 0.5 or not 0.0 <= self.recital_heldout_share < 0.5:
            raise ConfigurationError("held-out shares must be in [0, 0.5)")
        if self.title_replicas < 0 or self.extra_weight < 0:
            raise ConfigurationError("title_replicas and extra_weight must be >= 0")
        if (
            not 0.0 < self.negative_min_share <= 1.0
            or self.negatives_per_article < 0
            or self.negative_weight < 0
            or self.keyword_negatives < 0
            or not 0.0 <= self.recital_alignment <= 1.0
        ):
            raise ConfigurationError(
                "negative_min_share must be in (0, 1]; negatives_per_article, negative_weight and "
                "keyword_negatives >= 0; recital_alignment in [0, 1]"
            )
        # stored as JSON lists, given back as tuples
        object.__setattr__(self, "parallel_acts", tuple(self.parallel_acts))
        object.__setattr__(self, "negative_acts", tuple(self.negative_acts))
        for name in ("parallel_provisions", "lexical_provisions"):
            provisions = tuple((str(a), int(n), int(g)) for a, n, g in getattr(self, name))
            object.__setattr__(self, name, provisions)

    @property
    def acts(self) -> tuple[str, ...]:
        """The law packs besides the GDPR that the training data reads."""
        provisions = (a for a, _, _ in (*self.parallel_provisions, *self.lexical_provisions))
        return tuple(dict.fromkeys((*self.parallel_acts, *provisions, *self.negative_acts)))


@dataclass(frozen=True)
class Example:
    """One labelled text. ``labels`` are GDPR article numbers (one for training units, one or more for
    recital and realistic queries); ``source`` says where it came from (``article``, ``title``, ``recital``,
    ``extra``, ``parallel``, ``negative``, ``review``); ``negatives`` are articles the text must *not* be given
    (an unlikelihood term in training)."""

    id: str
    text: str
    labels: tuple[int, ...]
    source: str
    negatives: tuple[int, ...] = ()


@dataclass(frozen=True)
class ArticleUnits:
    """An article broken into training units."""

    number: int
    title: str
    units: tuple[str, ...]


@dataclass
class TrainingData:
    """The output of :func:`build_training_data`."""

    train: list[Example]
    calibration: list[Example]
    qa: list[Example]
    qr: list[Example]
    articles: list[ArticleUnits]
    provenance: dict[str, Any] = field(default_factory=dict)
    #: article → its training units (no held-out unit), for task-adaptive pre-training
    train_units: dict[int, list[str]] = field(default_factory=dict)
    #: article → whole texts of its training recitals (empty without a recital map)
    train_recitals: dict[int, list[str]] = field(default_factory=dict)
    #: article → units of the articles of parallel acts that restate it (``DataConfig.parallel_acts``)
    parallel_units: dict[int, list[str]] = field(default_factory=dict)
    #: article → its training units restated in a policy's words (``DataConfig.restated``)
    restated_units: dict[int, list[str]] = field(default_factory=dict)
    #: article → units of other acts' provisions for its lexical document only (``DataConfig.lexical_provisions``)
    lexical_units: dict[int, list[str]] = field(default_factory=dict)

    def lexical_documents(self, *, restated: bool = True, gdpr_only: bool = False) -> dict[int, str]:
        """Article → the text the lexical expert indexes: title, training units, parallel units, restated units
        and the units of the lexical provisions (never a held-out unit); ``restated=False``: the acts' own words
        only; ``gdpr_only``: without the lexical provisions (what a question about the GDPR's own text reads)."""
        documents = _lexical_documents(
            self.articles, self.train_units, self.parallel_units, self.restated_units if restated else None
        )
        if not gdpr_only:
            for number, units in self.lexical_units.items():
                if number in documents:
                    documents[number] = "\n".join((documents[number], *units))
        return documents

    @property
    def label_counts(self) -> Counter[int]:
        return Counter(e.labels[0] for e in self.train if e.labels)


def split_sentences(text: str) -> list[str]:
    """Split legal text into sentences (regex: end punctuation followed by a capital or an opening mark)."""
    out: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if line:
            out.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return out


def _paragraph_units(text: str) -> list[str]:
    """Units of one paragraph: sentences, with every point ``(a) …`` prefixed by the premise it completes."""
    units: list[str] = []
    premise = ""
    for line in (ln.strip() for ln in text.splitlines()):
        if not line:
            continue
        if _POINT.match(line):
            body = _POINT.sub("", line)
            lead = premise if len(premise.split()) <= 40 else " ".join(premise.split()[-40:])
            units.append(f"{lead} {body}".strip())
        else:
            sentences = split_sentences(line)
            units.extend(sentences)
            if sentences and line.rstrip().endswith((":", "—", "-")):
                premise = sentences[-1]
            elif sentences:
                premise = ""
    return units


def _without_public_duties(units: Sequence[str]) -> list[str]:
    """``units`` without those that address public bodies only
    (:func:`compliance.rules.addressees.addresses_public_bodies`)."""
    from compliance.rules.addressees import addresses_public_bodies

    return [u for u in units if not addresses_public_bodies(u)]


def _regulated_units(units: list[str]) -> list[str]:
    """``units`` (an article's training sentences) without those that address public bodies only when they are fewer
    than half of them (an article that speaks mostly to public bodies, such as Art. 58 or 45, keeps them all:
    :attr:`DataConfig.public_duties`)."""
    kept = _without_public_duties(units)
    return kept if 2 * len(kept) > len(units) else units


def article_units(law: Law) -> list[ArticleUnits]:
    """All articles of ``law`` as :class:`ArticleUnits`, in article order."""
    result: list[ArticleUnits] = []
    for art in law.articles:
        if art.number is None or not art.number.isdigit():
            continue
        paragraphs = [c for c in law.children(art.key) if c.kind == "paragraph" and c.text]
        texts = [p.text for p in paragraphs] if paragraphs else [law.text_of(art.key)]
        units: list[str] = []
        for t in texts:
            units.extend(u for u in _paragraph_units(t) if len(u.split()) >= 3)
        result.append(ArticleUnits(int(art.number), art.title or f"Article {art.number}", tuple(units)))
    return result


def _lexical_documents(
    articles: Sequence[ArticleUnits],
    train_units: Mapping[int, Sequence[str]],
    parallels: Mapping[int, Sequence[str]],
    restated: Mapping[int, Sequence[str]] | None = None,
) -> dict[int, str]:
    return {
        a.number: "\n".join(
            (
                a.title,
                *train_units.get(a.number, ()),
                *parallels.get(a.number, ()),
                *(restated or {}).get(a.number, ()),
            )
        )
        for a in articles
    }


def _alignment_scorer(
    articles: Sequence[ArticleUnits], train_units: Mapping[int, Sequence[str]]
) -> LexicalArticleScorer:
    """BM25 over each article's title and its own training units (no recital, no restatement): what a recital
    sentence is compared with to find which of its articles it speaks of."""
    from compliance.models.lexical import LexicalArticleScorer

    return LexicalArticleScorer(
        _lexical_documents(articles, train_units, {}), stopwords="en_plus", numbers=False
    )


def align_recital_sentences(
    sentences: Sequence[str], articles: Sequence[int], scorer: LexicalArticleScorer, share: float
) -> list[list[int]]:
    """For each of a recital's ``sentences``, the ``articles`` (those the map pairs with the recital) it speaks
    of: each whose BM25 score against ``scorer``'s article documents reaches ``share`` of the best one's; all of
    them when the sentence shares no term with any."""
    known = [a for a in articles if a in scorer.documents]
    if len(known) < 2 or not sentences:
        return [list(articles)] * len(sentences)
    columns = [scorer.labels.index(a) for a in known]
    scores = scorer.scores(list(sentences))[:, columns]
    owners: list[list[int]] = []
    for row in scores:
        best = float(row.max())
        if best <= 0:
            owners.append(list(articles))
        else:
            owners.append([a for a, v in zip(known, row, strict=True) if float(v) >= share * best])
    return owners


def restated_units(train_units: Mapping[int, Sequence[str]]) -> dict[int, list[str]]:
    """Article → its training units restated in a policy's words (:func:`compliance.models.restate.restate`),
    those that read differently from the law's own sentence, each once."""
    out: dict[int, list[str]] = {}
    for number, units in train_units.items():
        own = set(units)
        restated = [r for r in dict.fromkeys(restate(u) for u in units) if r not in own]
        if restated:
            out[number] = restated
    return out


def _title_key(title: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", title.lower()).split())


def parallel_units(gdpr: Sequence[ArticleUnits], other: Law) -> dict[int, list[str]]:
    """GDPR article → the units of ``other``'s articles whose title is that article's title, where the title
    names exactly one GDPR article (the LED's "Security of processing" restates GDPR Art. 32; "Independence", the
    title of two GDPR articles, names none)."""
    owners: dict[str, list[int]] = {}
    for art in gdpr:
        owners.setdefault(_title_key(art.title), []).append(art.number)
    out: dict[int, list[str]] = {}
    for art in article_units(other):
        found = owners.get(_title_key(art.title), [])
        if len(found) == 1 and art.units:
            out.setdefault(found[0], []).extend(art.units)
    return out


def provision_units(law: Law, number: int) -> list[str]:
    """The units of article ``number`` of ``law`` that oblige someone other than public bodies alone
    (:func:`compliance.rules.addressees.addresses_public_bodies`: "By 17 October 2024, the Commission shall adopt
    implementing acts …" is left out).

    Raises:
        ConfigurationError: ``law`` has no article ``number``.
    """
    for art in article_units(law):
        if art.number == number:
            return _without_public_duties(art.units)
    raise ConfigurationError(f"{law.short_name or law.identifier} has no article {number}")


def recital_texts(law: Law) -> dict[int, str]:
    """Recital number → text, for the numbered recitals of ``law``."""
    return {int(r.number): r.text for r in law.recitals if r.number and r.number.isdigit()}


def provision_recitals(law: Law, pack: str, number: int) -> tuple[list[int], list[str]]:
    """The recitals of ``law`` that its law pack ``pack`` pairs with article ``number`` (its editorial article ↔
    recital map), and their sentences of at least three words.

    Raises:
        ConfigurationError: the pack maps the article to a recital the law does not have.
    """
    from compliance.rules.packs import get_pack

    wanted = get_pack(pack).recital_map().get(number, [])
    texts = recital_texts(law)
    missing = [r for r in wanted if r not in texts]
    if missing:
        raise ConfigurationError(
            f"the {pack} law pack pairs Art. {number} with recital(s) {missing}, which "
            f"{law.short_name or law.identifier} does not have"
        )
    sentences = [s for r in wanted for s in split_sentences(texts[r]) if len(s.split()) >= 3]
    return list(wanted), sentences


def _provisions(
    provisions: Sequence[tuple[str, int, int]], laws: Mapping[str, Law], numbers: Collection[int]
) -> dict[int, list[str]]:
    """GDPR article → the units of the provisions of other acts mapped to it (:func:`provision_units`)."""
    out: dict[int, list[str]] = {}
    for name, number, article in provisions:
        if article not in numbers:
            raise ConfigurationError(
                f"{name} Art. {number} is mapped to GDPR Art. {article}, which does not exist"
            )
        out.setdefault(article, []).extend(provision_units(laws[name], number))
    return out


def negative_candidates(law: Law, min_words: int = 5) -> list[str]:
    """The units of ``law`` that could be mined as negatives: at least ``min_words`` words of letters (no footnote
    references), and not within the GDPR's material scope (no mention of personal data, data protection, privacy
    or data subjects)."""
    seen: set[str] = set()
    out: list[str] = []
    for art in article_units(law):
        for unit in art.units:
            words = sum(1 for w in unit.split() if len(w) > 2 and w.isalpha())
            if words >= min_words and not _PERSONAL_DATA.search(unit) and unit not in seen:
                seen.add(unit)
                out.append(unit)
    return out


def mine_negatives(
    texts: Sequence[str], lexical: LexicalArticleScorer, config: DataConfig
) -> list[tuple[str, int]]:
    """``(text, article)`` for the texts the lexical expert gives one article at least
    ``config.negative_min_share`` of its mass, at most ``config.negatives_per_article`` per article (the most
    confident first; ties in text order)."""
    if not texts or config.negatives_per_article == 0:
        return []
    probs = np.exp(lexical.log_probs(list(texts)))
    best = probs.argmax(axis=1)
    picked: dict[int, list[tuple[float, int]]] = {}
    for i, j in enumerate(best):
        p = float(probs[i, j])
        if p >= config.negative_min_share:
            picked.setdefault(int(lexical.labels[int(j)]), []).append((-p, i))
    return [
        (texts[i], article)
        for article, rows in sorted(picked.items())
        for _, i in sorted(rows)[: config.negatives_per_article]
    ]


_KEYWORD = re.compile(r"[^\W\d_][\w-]*")


def keyword_texts(
    units: Mapping[int, Sequence[str]], lexical: LexicalArticleScorer, k: int
) -> list[tuple[str, int]]:
    """``(keywords, article)`` for every unit of ``units`` (article → its sentences) with at least ``2 * k``
    distinct terms: its ``k`` words whose terms (``lexical``'s stems) are in the fewest of ``lexical``'s article
    documents, in the unit's order, each term once (ties: the earlier word). Texts that repeat are given once."""
    if k <= 0:
        return []
    df = lexical.document_frequency
    stems: dict[str, str] = {}
    out: dict[str, int] = {}
    for article, texts in sorted(units.items()):
        for text in texts:
            words: list[tuple[int, str]] = []  # (position, word), the first word of each term
            seen: set[str] = set()
            for i, m in enumerate(_KEYWORD.finditer(text)):
                word = m.group(0)
                low = word.lower()
                if low not in stems:
                    terms = lexical.terms(low)
                    stems[low] = terms[0] if len(terms) == 1 else ""
                term = stems[low]
                if term and term not in seen:
                    seen.add(term)
                    words.append((i, word))
            if len(words) < 2 * k:
                continue
            rarest = sorted(words, key=lambda w: (df.get(stems[w[1].lower()], 0), w[0]))[:k]
            keywords = " ".join(w for _, w in sorted(rarest))
            out.setdefault(keywords, article)
    return list(out.items())


def _bucket(text: str, seed: int) -> float:
    digest = hashlib.sha1(f"{seed}:{text}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _split(key: str, share: float, seed: int) -> str:
    b = _bucket(key, seed)
    if b < share:
        return "qa"
    if b < 2 * share:
        return "calibration"
    return "train"


def recital_map_checksum(recital_map: Mapping[int, Sequence[int]]) -> str:
    """sha256 of the article → recitals map in a canonical JSON form."""
    canon = json.dumps(
        {str(k): sorted(int(r) for r in v) for k, v in sorted(recital_map.items())}, sort_keys=True
    )
    return hashlib.sha256(canon.encode()).hexdigest()


def load_extra_examples(path: Path) -> list[Example]:
    """Read extra supervision: JSONL lines ``{"id", "text", "articles": [..]}`` (``gdpr_articles`` accepted).

    Raises:
        ConfigurationError: a line is not valid JSON or has no text/articles.
    """
    out: list[Example] = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                arts = row.get("articles", row.get("gdpr_articles"))
                labels = tuple(int(a) for a in arts)
                text = str(row["text"])
            except (ValueError, KeyError, TypeError) as e:
                raise ConfigurationError(f"{path}:{n}: expected {{'id','text','articles'}}: {e}") from e
            if text.strip() and labels:
                out.append(Example(str(row.get("id", f"{path.stem}:{n}")), text, labels, "extra"))
    return out


def file_checksum(path: Path) -> str:
    """sha256 hex of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _round_robin(group: Sequence[str], k: int) -> list[str]:
    if not group:
        return []
    n = max(k, len(group))
    return [group[i % len(group)] for i in range(n)]


def build_training_data(
    law: Law,
    recital_map: Mapping[int, Sequence[int]] | None,
    config: DataConfig,
    extra: Iterable[Example] = (),
    *,
    extra_source: str | None = None,
    acts: Mapping[str, Law] | None = None,
) -> TrainingData:
    """Build training examples and the held-out calibration, QA and QR sets from a parsed GDPR.

    Args:
        law: the project's own parse of the GDPR (99 articles, 173 recitals).
        recital_map: article number → recital numbers; needed for recital enrichment and for QR.
        config: the data recipe.
        extra: extra supervised examples (each label gets the text); every label must be a valid article.
        extra_source: a description (file name, checksum) of ``extra`` for the provenance record.
        acts: the parsed acts ``config.parallel_acts`` and ``config.negative_acts`` name (default: read from their
            law packs, :func:`compliance.rules.load_pack_law`). They add training examples only: the held-out
            sets are the GDPR's whatever they are.

    Raises:
        ConfigurationError: an act the recipe names cannot be read.

    Returns:
        The training set (one label per example) and the held-out sets, with provenance.
    """
    articles = article_units(law)
    numbers = {a.number for a in articles}
    train_units: dict[int, list[str]] = {}
    calibration: list[Example] = []
    qa: list[Example] = []
    for art in articles:
        kept: list[str] = []
        for i, unit in enumerate(art.units):
            where = (
                _split(f"art:{art.number}:{unit}", config.heldout_share, config.seed)
                if len(art.units) >= config.min_units_for_heldout
                else "train"
            )
            ex = Example(f"art:{art.number}/u:{i}", unit, (art.number,), "article")
            if where == "qa":
                qa.append(ex)
            elif where == "calibration":
                calibration.append(ex)
            else:
                kept.append(unit)
        train_units[art.number] = kept if config.public_duties else _regulated_units(kept)

    # Recitals: split by number; held-out ones become QR / calibration queries labelled with their articles.
    recital_text = recital_texts(law)
    articles_of: dict[int, list[int]] = {}
    for art_no, recs in (recital_map or {}).items():
        for rec in recs:
            if int(art_no) in numbers and int(rec) in recital_text:
                articles_of.setdefault(int(rec), []).append(int(art_no))
    recital_split = {
        rec: {"qa": "qr"}.get(s, s)
        for rec in articles_of
        for s in [_split(f"rec:{rec}", config.recital_heldout_share, config.seed)]
    }
    qr: list[Example] = []
    train_recital_sentences: dict[int, list[str]] = {}
    train_recitals: dict[int, list[str]] = {}
    aligner: LexicalArticleScorer | None = None
    if config.recitals and config.recital_alignment > 0:
        aligner = _alignment_scorer(articles, train_units)
    for rec, arts in sorted(articles_of.items()):
        ex = Example(f"rec:{rec}", recital_text[rec], tuple(sorted(set(arts))), "recital")
        where = recital_split[rec]
        if where == "qr":
            qr.append(ex)
        elif where == "calibration":
            calibration.append(ex)
        else:
            for art_no in arts:
                train_recitals.setdefault(art_no, []).append(recital_text[rec])
        if where == "train" and config.recitals:
            sentences = [s for s in split_sentences(recital_text[rec]) if len(s.split()) >= 3]
            paired = sorted(set(arts))
            owners = (
                align_recital_sentences(sentences, paired, aligner, config.recital_alignment)
                if aligner is not None
                else [paired] * len(sentences)
            )
            for art_no in dict.fromkeys(arts):
                train_recital_sentences.setdefault(art_no, []).extend(
                    s for s, own in zip(sentences, owners, strict=True) if art_no in own
                )

    laws = _acts(config, acts)
    parallels: dict[int, list[str]] = {}
    for name in config.parallel_acts:
        for number, units in parallel_units(articles, laws[name]).items():
            parallels.setdefault(number, []).extend(units)
    for number, units in _provisions(config.parallel_provisions, laws, numbers).items():
        parallels.setdefault(number, []).extend(units)
    lexical_units = _provisions(config.lexical_provisions, laws, numbers)
    read: dict[tuple[str, int], tuple[list[int], list[str]]] = {}

    def explain(
        provisions: Sequence[tuple[str, int, int]], into: dict[int, list[str]]
    ) -> dict[str, dict[str, list[int]]]:
        """Add the recitals each provision's law pack pairs with it (read once per provision) to its GDPR
        article's texts in ``into``; return the recital numbers read, by act and article."""
        numbers_by_act: dict[str, dict[str, list[int]]] = {}
        for name, number, article in provisions:
            if (name, number) not in read:
                read[(name, number)] = provision_recitals(laws[name], name, number)
            numbers_read, sentences = read[(name, number)]
            if numbers_read:
                numbers_by_act.setdefault(name, {})[str(number)] = numbers_read
                into.setdefault(article, []).extend(sentences)
        return numbers_by_act

    recitals_read = (
        explain((*config.parallel_provisions, *config.lexical_provisions), lexical_units)
        if config.lexical_recitals
        else {}
    )
    # the recitals of the parallel provisions, as training text of the encoder only (the lexical expert reads
    # them through ``lexical_recitals``; the umbrella reader, which reads the parallel units, does not)
    explained: dict[int, list[str]] = {}
    parallel_recitals_read = (
        explain(config.parallel_provisions, explained) if config.parallel_recitals else {}
    )

    restated = restated_units(train_units) if config.restated else {}

    train: list[Example] = []
    for art in articles:
        group = list(train_units[art.number])
        group += [art.title] * config.title_replicas
        group += train_recital_sentences.get(art.number, [])
        own_parallels = set(parallels.get(art.number, ())) | set(explained.get(art.number, ()))
        own_parallels -= set(group)
        group += parallels.get(art.number, [])
        group += explained.get(art.number, [])
        own_restated = set(restated.get(art.number, ())) - set(group)
        group += restated.get(art.number, [])
        # what each text of the group is, the title before a parallel provision before a restated sentence
        sources = dict.fromkeys(own_restated, "restated") | dict.fromkeys(own_parallels, "parallel")
        sources[art.title] = "title"
        for j, text in enumerate(_round_robin(group, config.min_k)):
            source = sources.get(text, "article")
            train.append(Example(f"train:{art.number}:{j}", text, (art.number,), source))

    mined: list[tuple[str, int]] = []
    if config.negative_acts:
        from compliance.models.lexical import LexicalArticleScorer

        known = {e.text for e in train}
        candidates = [
            t for name in config.negative_acts for t in negative_candidates(laws[name]) if t not in known
        ]
        lexical = LexicalArticleScorer(_lexical_documents(articles, train_units, parallels, restated))
        mined = mine_negatives(list(dict.fromkeys(candidates)), lexical, config)
        for k, (text, article) in enumerate(mined):
            train.append(Example(f"negative:{k}", text, (), "negative", (article,)))
    keywords: list[tuple[str, int]] = []
    if config.keyword_negatives:
        from compliance.models.lexical import LexicalArticleScorer

        documents = _lexical_documents(articles, train_units, parallels, restated)
        scorer = LexicalArticleScorer(documents, stopwords="en_plus", numbers=False)
        known = {e.text for e in train}
        keywords = [
            (t, a) for t, a in keyword_texts(train_units, scorer, config.keyword_negatives) if t not in known
        ]
        for k, (text, article) in enumerate(keywords):
            train.append(Example(f"keywords:{k}", text, (), "negative", (article,)))

    extra_list = list(extra)
    for ex in extra_list:
        bad = [a for a in ex.labels if a not in numbers]
        if bad:
            raise ConfigurationError(f"extra example {ex.id}: unknown article(s) {bad}")
        for rep in range(config.extra_weight):
            for a in ex.labels:
                train.append(Example(f"extra:{ex.id}:{a}:{rep}", ex.text, (a,), "extra"))

    provenance: dict[str, Any] = {
        "law": {
            "identifier": law.identifier,
            "short_name": law.short_name,
            "checksum": law.checksum,
            "source_format": law.source_format,
            "articles": len(articles),
            "recitals": len(recital_text),
        },
        "recital_map_checksum": recital_map_checksum(recital_map or {}),
        "recital_pairs": sum(len(v) for v in articles_of.values()),
        "data_config": asdict(config),
        "counts": {
            "train": len(train),
            "train_units": sum(len(v) for v in train_units.values()),
            "train_recital_sentences": sum(len(v) for v in train_recital_sentences.values()),
            "calibration": len(calibration),
            "qa": len(qa),
            "qr": len(qr),
            "extra": len(extra_list),
            "parallel_units": sum(len(v) for v in parallels.values()),
            "negatives": len(mined),
            "keyword_negatives": len(keywords),
            "restated_units": sum(len(v) for v in restated.values()),
            "lexical_units": sum(len(v) for v in lexical_units.values()),
        },
        "extra": extra_source,
    }
    if laws:
        provenance["acts"] = {
            name: {
                "identifier": act.identifier,
                "short_name": act.short_name,
                "checksum": act.checksum,
                "source_format": act.source_format,
                "use": [
                    u
                    for u, names in (
                        ("parallel", config.parallel_acts),
                        ("parallel provisions", [a for a, _, _ in config.parallel_provisions]),
                        ("lexical provisions", [a for a, _, _ in config.lexical_provisions]),
                        ("negatives", config.negative_acts),
                    )
                    if name in names
                ],
            }
            for name, act in laws.items()
        }
        provenance["parallel_articles"] = {str(a): len(u) for a, u in sorted(parallels.items())}
        if lexical_units:
            provenance["lexical_articles"] = {str(a): len(u) for a, u in sorted(lexical_units.items())}
        if recitals_read:
            provenance["lexical_recitals"] = recitals_read
        if parallel_recitals_read:
            provenance["parallel_recitals"] = parallel_recitals_read
        provenance["negatives_by_article"] = {
            str(a): n for a, n in sorted(Counter(article for _, article in mined).items())
        }
    return TrainingData(
        train,
        calibration,
        qa,
        qr,
        articles,
        provenance,
        train_units,
        train_recitals,
        parallels,
        restated,
        lexical_units,
    )


def _acts(config: DataConfig, given: Mapping[str, Law] | None) -> dict[str, Law]:
    """The parsed acts the recipe names: from ``given``, else from their law packs."""
    from compliance.errors import ComplianceError
    from compliance.rules import load_pack_law

    out: dict[str, Law] = {}
    for name in config.acts:
        if given is not None and name in given:
            out[name] = given[name]
            continue
        try:
            out[name] = load_pack_law(name)
        except ComplianceError as e:
            raise ConfigurationError(
                f"the training recipe reads law pack {name!r}, which could not be loaded ({e}); point "
                f"COMPLIANCE_LAW_MIRROR at a law mirror that holds it, or train a recipe without it"
            ) from e
    return out

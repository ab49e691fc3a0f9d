"""Which paragraphs are written in a language the classifier reads.

The shipped classifier learned the GDPR from its English text. Given a paragraph in German or French it does not
abstain: a French retention rule ("Les données personnelles des clients sont conservées pendant six ans …") was
ranked Art. 36 at 0.88 and proposed. An organisation in the EU keeps policies in several languages, so the audit
reads each paragraph's language first and maps only those in :attr:`ClassifierLinkConfig.languages
<compliance.linking.classifier_links.ClassifierLinkConfig.languages>`; the others are counted apart, by language.

The language comes from py3langid (a maintained fork of langid.py, a naive Bayes model over byte n-grams of 97
languages, BSD). A paragraph is set aside only when it has at least :data:`MIN_WORDS` words and the identifier
gives another language at least :data:`CONFIDENCE` of its probability: short labels, codes and product names are
mapped as before. On 2,554 English texts (GDPRhub case facts and lead summaries, the control sets, the role set's
and the sample policies' paragraphs) no paragraph was set aside (docs/roles.md, *Paragraphs in another
language*). Where English is among the languages read, a paragraph whose words are at least a quarter English
function words is English without asking the identifier (about 0.1 ms a paragraph saved on most prose).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Collection
from typing import Any

__all__ = ["CONFIDENCE", "MIN_WORDS", "other_language"]

#: fewer words than this: the paragraph is read whatever its language (too short to tell)
MIN_WORDS = 6
#: the identifier's probability of another language at or above which a paragraph is set aside
CONFIDENCE = 0.9
#: share of English function words at or above which a paragraph is English without the identifier
_ENGLISH_SHARE = 0.25
_WORD_RE = re.compile(r"[^\W\d_]+")
_IDENTIFIER: Any = None
_LOCK = threading.Lock()


def _identifier() -> Any:
    """py3langid's identifier with normalised probabilities, loaded once per process (about 0.5 s)."""
    global _IDENTIFIER
    if _IDENTIFIER is None:  # the lock only while loading: every paragraph of an audit asks
        with _LOCK:
            if _IDENTIFIER is None:
                from py3langid.langid import MODEL_FILE, LanguageIdentifier

                _IDENTIFIER = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    return _IDENTIFIER


def _english_share(words: list[str]) -> float:
    from compliance.retrieval.analysis import english_stopwords

    stop = english_stopwords()
    return sum(1 for w in words if w in stop) / len(words)


def other_language(text: str, languages: Collection[str]) -> str | None:
    """The language ``text`` is written in (an ISO 639-1 code) when it is confidently none of ``languages``;
    None when it is one of them, when it is too short to tell, or when the identifier is unsure."""
    words = _WORD_RE.findall(text.lower())
    if len(words) < MIN_WORDS or not languages:
        return None
    if "en" in languages and _english_share(words) >= _ENGLISH_SHARE:
        return None
    language, confidence = _identifier().classify(text)
    if language in languages or confidence < CONFIDENCE:
        return None
    return str(language)

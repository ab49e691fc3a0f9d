"""The GDPR article classifier: training data from the law, fine-tuning, calibration, scoring ensemble.

Public API (imported lazily; nothing heavy is loaded by ``import compliance.models``)::

    load(path=None, device=None) -> ArticleClassifier        # a trained classifier directory
    clf.rank(texts, top_k=5) -> list[list[ArticleScore]]      # ranked GDPR articles per text
    train(get_recipe("r"), law, recital_map, out_dir=...)     # the default recipe (seed 000)

See ``docs/classifier.md``.
"""

from __future__ import annotations

from compliance._lazy import lazy_exports

_EXPORTS = {
    "ArticleClassifier": "compliance.models.classifier",
    "ArticleScore": "compliance.models.classifier",
    "ClassifierConfig": "compliance.models.classifier",
    "load": "compliance.models.classifier",
    "DEFAULT_RECIPE": "compliance.models.training",
    "RECIPES": "compliance.models.training",
    "Recipe": "compliance.models.training",
    "TrainResult": "compliance.models.training",
    "get_recipe": "compliance.models.training",
    "train": "compliance.models.training",
    "DataConfig": "compliance.models.data",
    "TrainingData": "compliance.models.data",
    "build_training_data": "compliance.models.data",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

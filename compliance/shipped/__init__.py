"""Models shipped inside the package, read through :mod:`importlib.resources` (never written to):

* ``gdpr-classifier/``: the default GDPR article classifier in compact form (LoRA adapters over the packaged
  all-MiniLM-L6-v2, :mod:`compliance.models.adapter`), used when the model directory has no classifier of its own;
* ``link-decision/``: the link decision's threshold and band calibrated for the base bi-encoder.

Each folder carries ``SHA256SUMS``. Rebuilt by ``python -m experiments.build_shipped_model`` (docs/classifier.md).
"""

"""When an input belongs to a concept: the one threshold every part of the library binarizes concepts with.

Concept values are 0/1 labels, or probabilities (pseudo-labels, probe outputs); an input is a positive of
concept ``t`` where ``c_t ≥ 0.5``, the binarization ``B(c)`` of paper 000 (Sec. 3: metrics that need binary
concepts round them). The metric engine (:mod:`neuroneval.metrics.binarize`), the worlds, the probes and the
pseudo-label reports all read it from here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: ``B(c) = 1[c ≥ CONCEPT_THRESHOLD]``.
CONCEPT_THRESHOLD = 0.5


def concept_positive(values: Any) -> np.ndarray:
    """``B(c) = 1[c ≥ 0.5]`` as a boolean numpy array: which inputs belong to the concept (elementwise)."""
    return np.asarray(values) >= CONCEPT_THRESHOLD

"""The quality gate of a model trained in the DAG: a model no better than its baseline fails its training job.

A model that diverged (an absurd ``training.learning_rate``) still writes weights, and everything downstream —
activations, meta-evaluation, Table 4 — would score its units as if they meant something. The training steps
compare each model's held-out quality with the baseline that ``results/worlds_report.csv`` sets beside it and
stop before writing the model when it does not beat it (non-finite losses already stop :func:`training.fit
<neuroneval.models.training.fit>` at the step they appear).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class QualityMeasure:
    """How a model's held-out quality is named and compared with its baseline."""

    #: what the quality is, as the message says it (``"held-out accuracy"``)
    name: str
    #: what the baseline is (``"chance"``)
    baseline_name: str
    #: True: the model must score above the baseline; False: below it (perplexity)
    higher_is_better: bool


#: Classifiers: accuracy on the held-out images vs chance ``max_c P(c)`` of the training classes.
ACCURACY = QualityMeasure("held-out accuracy", "chance", higher_is_better=True)
#: Linear probes: mean held-out accuracy over concepts vs always predicting each concept's majority training value.
CONCEPT_ACCURACY = QualityMeasure("held-out concept accuracy", "the majority value's", higher_is_better=True)
#: Language models: perplexity on probe tokens vs the unigram perplexity of the training counts.
PERPLEXITY = QualityMeasure("probe perplexity", "the unigram perplexity", higher_is_better=False)


def beats_baseline(measure: QualityMeasure, quality: float, baseline: float) -> bool:
    """``quality > baseline`` (or ``<`` for a lower-is-better measure); False when either is NaN."""
    return quality > baseline if measure.higher_is_better else quality < baseline


def check_beats_baseline(source: str, measure: QualityMeasure, quality: float, baseline: float, *,
                         loss: float | None = None) -> None:
    """Raise ``ValueError`` naming ``source`` (the model's path, e.g. ``data/models/vision_cnn``), both figures and
    the final training loss unless the model strictly beats its baseline (:func:`beats_baseline`).

    >>> check_beats_baseline("data/models/x", ACCURACY, 0.083, 0.105, loss=6e5)
    Traceback (most recent call last):
    ...
    ValueError: data/models/x: held-out accuracy 0.083 is not above chance 0.105 (loss 6e+05); lower \
training.learning_rate? (or train longer)
    """
    if beats_baseline(measure, quality, baseline):
        return
    digits = ".3g" if measure.higher_is_better else ".4g"
    relation = "above" if measure.higher_is_better else "below"
    trained = f" (loss {loss:.3g})" if loss is not None else ""
    diverged = loss is not None and not math.isfinite(loss)
    advice = "lower training.learning_rate?" + ("" if diverged else " (or train longer)")
    raise ValueError(f"{source}: {measure.name} {quality:{digits}} is not {relation} {measure.baseline_name} "
                     f"{baseline:{digits}}{trained}; {advice}")

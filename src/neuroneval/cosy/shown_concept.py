"""The one concept a simple explanation shows a text-to-image generator or a rater.

CoSy draws it (:func:`neuroneval.cosy.user.prompt_words`, the benchmark's :mod:`neuroneval.method_eval.cosy_table3`)
and the simulated crowd asks raters about it (:mod:`neuroneval.method_eval.crowd_table3`).
"""

from __future__ import annotations

import pandas as pd

from neuroneval.explain.explanation import Concept, Explanation, Linear, parse


def shown_concept(explanation: Explanation) -> str | None:
    """The one concept a simple explanation shows a generator or a rater, or ``None`` when it shows none.

    A :class:`Concept` shows its name; a :class:`Linear` explanation the concept of its largest positive weight
    (``0.3·a + 0.1·b`` shows ``a``; with no positive weight it predicts no presence of anything and shows none);
    formulas with operators, clustered and text explanations show no single concept.

    >>> shown_concept(parse("0.2*class:a + 0.5*class:b + 0.1", "linear")), shown_concept(parse("NOT class:a"))
    ('class:b', None)
    """
    if isinstance(explanation, Concept):
        return explanation.name
    if isinstance(explanation, Linear):
        positive = [(weight, name) for name, weight in explanation.weights if weight > 0]
        return max(positive)[1] if positive else None
    return None


def shown_concepts(frame: pd.DataFrame) -> list[str | None]:
    """:func:`shown_concept` of every row of an explanation file (columns ``explanation``, ``kind``)."""
    return [shown_concept(parse(text, kind)) for text, kind in zip(frame["explanation"], frame["kind"], strict=True)]

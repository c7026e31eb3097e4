"""The progress bar of a scoring call (``progress=True``): one tqdm bar over its pairs, shown after a delay.

A call scores its (unit, concept) pairs a unit block against a concept chunk at a time
(:mod:`neuroneval.metrics.budget`). With ``progress=True`` a tqdm bar on stderr counts the pairs scored (times the
grid points of ``score_grid``); it appears only once the call has run for
:data:`neuroneval.progress.DELAY_S` seconds, so quick calls print nothing, and it is removed when the call ends. With
``progress=False`` nothing is printed.
"""

from __future__ import annotations

from tqdm import tqdm

from neuroneval import progress


def progress_bar(total: int, metric: str, *, enabled: bool) -> tqdm:
    """A bar over ``total`` pairs labelled with the metric (a silent one when not ``enabled``; removed at the end,
    as a job scores many metrics); the library's one bar (:mod:`neuroneval.progress`)."""
    return progress.progress_bar(total=total, desc=f"scoring {metric}", unit="pair", unit_scale=True,
                                 enabled=enabled, leave=False)

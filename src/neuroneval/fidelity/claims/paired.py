"""The one rule of every method-comparison claim: a paired bootstrap over units of the difference of two methods.

Paper 001 ranks explanation methods by their mean score over the same units (Tables 1–3). A claim "A beats B" is
judged on the per-unit scores of both methods on their common units ``u = 1..n`` (units where either is missing are
left out, so the pairs stay pairs):

``Δ = (1/n) Σ_u (s_A(u) − s_B(u))``, and its percentile bootstrap interval ``[q_{(1−L)/2}, q_{(1+L)/2}]`` of the
means ``Δ*_b`` of ``n_boot`` resamples of the ``n`` units drawn with replacement — one draw of units per resample
for both methods, so the unit-to-unit spread they share cancels (Efron & Tibshirani 1993, Ch. 13).

The verdict (:data:`~neuroneval.fidelity.claims.common.VERDICTS`): ``holds`` when the interval lies above 0 (it
excludes 0 in A's favour), ``within_noise`` when it contains 0, ``differs`` when it lies below 0 (B beats A), and
``not_testable`` with fewer than 2 common units.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from neuroneval.options import Options, check_fraction, check_range


@dataclass(frozen=True)
class PairedBootstrapOptions(Options):
    """Resamples ``n_boot``, coverage ``ci_level`` of the percentile interval and the ``seed`` of the draws
    (the workflow passes ``explain.n_boot``, ``explain.ci_level`` and ``explain.random_seed``)."""

    n_boot: int = 1000
    ci_level: float = 0.95
    seed: int = 0

    def validate(self) -> None:
        check_range(self, "n_boot", 1, integer=True)
        check_fraction(self, "ci_level", high_open=True)
        check_range(self, "seed", 0, integer=True)


@dataclass(frozen=True, kw_only=True)
class PairedComparison:
    """The outcome of "``better`` beats ``worse``": the mean paired difference ``difference`` over ``n_units``
    common units, its bootstrap interval ``[ci_low, ci_high]`` and the verdict of the rule."""

    better: str
    worse: str
    difference: float
    ci_low: float
    ci_high: float
    n_units: int
    verdict: str

    def text(self) -> str:
        """``A − B = +0.021 [+0.010, +0.030] (n = 64)``."""
        return (f"{self.better} − {self.worse} = {self.difference:+.3f} [{self.ci_low:+.3f}, {self.ci_high:+.3f}] "
                f"(n = {self.n_units})")


def paired_bootstrap_comparison(better_scores: np.ndarray, worse_scores: np.ndarray, *,
                                options: PairedBootstrapOptions | None = None, better: str = "A",
                                worse: str = "B") -> PairedComparison:
    """Judge "``better`` beats ``worse``" on their per-unit scores (two arrays over the same units, in the same
    order; NaN where a method has no score) by the paired bootstrap rule of this module.

    Examples
    --------
    >>> a = np.array([0.50, 0.60, 0.70, 0.80, 0.90])
    >>> paired_bootstrap_comparison(a, a - 0.1, better="LE", worse="INVERT").verdict
    'holds'
    >>> paired_bootstrap_comparison(a - 0.1, a).verdict
    'differs'
    """
    options = options or PairedBootstrapOptions()
    first, second = np.asarray(better_scores, dtype=np.float64), np.asarray(worse_scores, dtype=np.float64)
    if first.shape != second.shape or first.ndim != 1:
        raise ValueError(f"paired scores must be two 1-D arrays over the same units, got shapes {first.shape} and "
                         f"{second.shape}")
    delta = (first - second)[np.isfinite(first) & np.isfinite(second)]
    if len(delta) < 2:
        return PairedComparison(better=better, worse=worse, difference=float(delta.mean()) if len(delta) else np.nan,
                                ci_low=np.nan, ci_high=np.nan, n_units=len(delta), verdict="not_testable")
    rng = np.random.default_rng(options.seed)
    means = delta[rng.integers(0, len(delta), size=(options.n_boot, len(delta)))].mean(axis=1)
    tail = 50.0 * (1.0 - options.ci_level)
    low, high = (float(value) for value in np.percentile(means, [tail, 100.0 - tail]))
    verdict = "holds" if low > 0 else "differs" if high < 0 else "within_noise"
    return PairedComparison(better=better, worse=worse, difference=float(delta.mean()), ci_low=low, ci_high=high,
                            n_units=len(delta), verdict=verdict)


def combined_verdict(verdicts: Iterable[str]) -> str:
    """The verdict of a claim made in several cells: ``differs`` if any cell differs, else ``within_noise`` if
    any is within noise, else ``holds``; ``not_testable`` cells are left out, and so is the claim when all are.

    >>> combined_verdict(["holds", "within_noise", "not_testable"])
    'within_noise'
    """
    tested = [verdict for verdict in verdicts if verdict != "not_testable"]
    if not tested:
        return "not_testable"
    for verdict in ("differs", "within_noise"):
        if verdict in tested:
            return verdict
    return "holds"

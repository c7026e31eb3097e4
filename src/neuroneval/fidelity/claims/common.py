"""What every claim module shares: the :class:`Claim` row, its columns, the verdicts and their rules.

A verdict is ``holds`` when the rule stated in the claim's text is met, ``differs`` otherwise, and
``not_testable`` where the build has no number for it. The reason of a ``differs`` row is computed from the
results (which settings, tests or cells differ and by how much), never typed in. The verdict rules are
:data:`VERDICT_RULES` (printed at the top of ``results/fidelity.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

VERDICTS = ("holds", "within_noise", "differs", "not_testable")
#: Where a paper's value comes from: a table as printed, the text (or a figure the text describes), the output
#: of the authors' code (the notebook outputs of Tables C.1–C.4), or none (a target of this project).
PAPER_SOURCES = ("printed table", "paper text", "authors' code output", "project target")
#: How each kind of claim is judged (rendered at the top of the report). Every rule decides ``holds`` on our point
#: estimate; where our result carries an interval, a claim that misses on the estimate is ``within_noise`` when
#: the interval still reaches the claimed value or threshold, ``differs`` when it does not.
VERDICT_RULES = (
    "holds: the claim's rule is met by our estimate; within noise: it is not, but our interval (bootstrap, seed "
    "spread, or mean ± 1.96 standard errors) reaches the paper's value or the rule's threshold; differs: the whole "
    "interval misses (or we have no interval and the estimate misses); not testable: the build has no number, "
    "and the reason says why",
    "a setting's best meta-AUPRC holds within ±0.10 of the paper's best for the setting it stands in for (within "
    "noise: its bootstrap interval meets that band); a setting without a paper counterpart holds when its ceiling "
    "is ≥ 0.9, its trained model ≥ 0.8 and it discriminates (Table 4's meta.discrimination: two metrics' "
    "meta-AUPRC intervals apart; within noise: both bootstrap intervals reach the targets and it discriminates)",
    "a ranking claim holds when the metric sits where the paper puts it (top 3; Spearman in the bottom 2); within "
    "noise when its meta-AUPRC interval overlaps that of the metric in the claimed place in every setting; the "
    "passing-vs-failing rank gap has no interval",
    "a Table 3 row holds when our pass/fail verdict (Decrease Acc > 90 % in all four columns; experimental = mean "
    "over the paper's 8 settings of App. F.1, digits reported beside) equals the paper's (no interval)",
    "a reference-mode table holds when every deterministic cell is within the tolerance of "
    "`compare_with_reference` (Δs 0.005, Decrease Acc 2 points) of the printed value (the notebook's where none is "
    "printed) and every stochastic cell within 4 standard errors or inside our spread over seeds",
    "Table D.2 holds when every closed form is within 4 standard errors of the simulated mean Δs (or 1e-4)",
    "Table E.2 holds when cosine drops by more than 0.2 and no other metric moves (no interval)",
    "a cost factor '≈ F×' holds when our factor lies in [F/2, 2F], within noise when only its bootstrap interval "
    "meets [F/2, 2F]",
    "a CoSy row holds when true explanations reach AUC ≥ 0.90 and random ones stay within 0.10 of 0.5 (intervals: "
    "mean ± 1.96 standard errors over units)",
    "a 004 reliability row holds when the measures the paper calls unreliable fall below 0.9 and the others reach "
    "it (within noise: every misplaced measure's bootstrap interval contains 0.9); an MTMM row when the mean "
    "|Kendall τ| of the block is inside the paper's range (interval: the mean of the pairs' |τ| interval ends); a "
    "validity or method row when the ordering the paper reports is ours too (faithfulness compared by |mean|, "
    "readability by mean; within noise: every reversed pair's intervals overlap)",
    "an explanation-method comparison 'A beats B' (LE best, Broden-style methods weak, LE leads the crowd) is judged "
    "per (setting, unit group) on the paired bootstrap interval over units of the mean difference of A's and B's "
    "scores: holds when it lies above 0, within noise when it contains 0, differs when it lies below; a claim over "
    "several cells differs if one differs, else is within noise if one is; the crowd agreement holds when the "
    "bootstrap interval of Kendall τ lies above 0, within noise when it contains 0, and differs when it lies below",
)
COLUMNS = ("paper", "table", "claim", "paper_value", "paper_source", "our_value", "verdict", "reason", "source")
#: Normal quantile of a two-sided 95 % interval: an interval from a mean and its standard error is mean ± Z_95·SE.
Z_95 = 1.959963984540054


@dataclass(frozen=True, kw_only=True)
class Claim:
    """One row of ``results/fidelity.csv`` (columns :data:`COLUMNS`), built with keywords only."""

    paper: str
    table: str
    claim: str
    paper_value: str
    paper_source: str
    our_value: str
    verdict: str
    reason: str
    source: str

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if self.paper_source not in PAPER_SOURCES:
            raise ValueError(f"paper_source must be one of {PAPER_SOURCES}, got {self.paper_source!r}")
        if self.verdict == "not_testable" and not self.reason:
            raise ValueError(f"a not_testable claim needs a reason (why the build has no number): {self.claim!r}")


def claims_frame(claims: Sequence[Claim]) -> pd.DataFrame:
    """The claims as a frame with exactly :data:`COLUMNS`."""
    return pd.DataFrame([asdict(claim) for claim in claims], columns=list(COLUMNS))


def interval_text(value: float, low: float, high: float) -> str:
    """``value [low, high]`` to 3 decimals, or ``value`` alone where the interval is not finite."""
    if np.isfinite(low) and np.isfinite(high):
        return f"{value:.3f} [{low:.3f}, {high:.3f}]"
    return f"{value:.3f}"


def judge(holds: bool, within_interval: bool = False) -> str:
    """The verdict of a rule: ``holds`` when it is met by our estimate, ``within_noise`` when it is not but is met
    somewhere in our interval (``within_interval``), ``differs`` otherwise."""
    if holds:
        return "holds"
    return "within_noise" if within_interval else "differs"


def normal_interval(mean: float, standard_error: float) -> tuple[float, float]:
    """``mean ± Z_95 · standard_error`` (NaN ends where the standard error is missing or not finite)."""
    mean, standard_error = float(mean), float(standard_error)
    if not np.isfinite(standard_error):
        return float("nan"), float("nan")
    return mean - Z_95 * standard_error, mean + Z_95 * standard_error


def meets(low: float, high: float, band_low: float, band_high: float) -> bool:
    """Whether the interval ``[low, high]`` shares a point with ``[band_low, band_high]`` (False when either end of
    the first is NaN: no interval, no noise)."""
    low, high = float(low), float(high)
    if not (np.isfinite(low) and np.isfinite(high)):
        return False
    return bool(high >= band_low and low <= band_high)


def absolute_interval(low: float, high: float) -> tuple[float, float]:
    """The interval of ``|x|`` for ``x`` in ``[low, high]``: ``[0, max(|low|, |high|)]`` when it contains 0."""
    low, high = float(low), float(high)
    if low <= 0 <= high:
        return 0.0, max(-low, high)
    return min(abs(low), abs(high)), max(abs(low), abs(high))

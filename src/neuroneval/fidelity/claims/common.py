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

VERDICTS = ("holds", "differs", "not_testable")
#: How each kind of claim is judged (rendered at the top of the report).
VERDICT_RULES = (
    "a setting's best meta-AUPRC holds within ±0.10 of the paper's best for the setting it stands in for; a "
    "setting without a paper counterpart holds when its ceiling is ≥ 0.9 and its trained model ≥ 0.8",
    "a ranking claim holds when the metric sits where the paper puts it (top 3; Spearman in the bottom 2)",
    "a Table 3 row holds when our pass/fail verdict (Decrease Acc > 90 % in all four columns) equals the paper's",
    "a reference-mode table holds when every deterministic cell is within the tolerance of "
    "`compare_with_reference` (Δs 0.005, Decrease Acc 2 points) and every stochastic cell within 4 standard errors",
    "Table D.2 holds when every closed form is within 4 standard errors of the simulated mean Δs",
    "a cost factor '≈ F×' holds when its bootstrap interval meets [F/2, 2F]",
    "a CoSy row holds when true explanations reach AUC ≥ 0.90 and random ones stay within 0.10 of 0.5",
    "a 004 reliability row holds when the measures the paper calls unreliable fall below 0.9 and the others reach "
    "it; an MTMM row when the mean |Kendall τ| of the block is inside the paper's range; a validity or method row "
    "when the ordering the paper reports is ours too (faithfulness compared by |mean|, readability by mean)",
    "an explanation-method ranking claim holds when it is true in every (setting, unit group) it covers; the "
    "crowd agreement holds when the bootstrap interval of Kendall τ lies above 0",
)
COLUMNS = ("paper", "table", "claim", "paper_value", "our_value", "verdict", "reason", "source")


@dataclass(frozen=True, kw_only=True)
class Claim:
    """One row of ``results/fidelity.csv`` (columns :data:`COLUMNS`), built with keywords only."""

    paper: str
    table: str
    claim: str
    paper_value: str
    our_value: str
    verdict: str
    reason: str
    source: str

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")


def claims_frame(claims: Sequence[Claim]) -> pd.DataFrame:
    """The claims as a frame with exactly :data:`COLUMNS`."""
    return pd.DataFrame([asdict(claim) for claim in claims], columns=list(COLUMNS))


def holds_or_differs(holds: bool) -> str:
    """``holds`` when ``holds`` is true, else ``differs``."""
    return "holds" if holds else "differs"


def interval_text(value: float, low: float, high: float) -> str:
    """``value [low, high]`` to 3 decimals, or ``value`` alone where the interval is not finite."""
    if np.isfinite(low) and np.isfinite(high):
        return f"{value:.3f} [{low:.3f}, {high:.3f}]"
    return f"{value:.3f}"

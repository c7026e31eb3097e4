"""Claims of the papers, each set beside the number our build measured, with a verdict and its measured reason.

Every builder takes result tables (as the workflow writes them) and returns :class:`Claim` rows, one module per
paper (paper 000 in two: its ranking and its sanity tests); :mod:`~neuroneval.fidelity.claims.common` holds the
row, the verdicts and their rules. The papers' numbers come from :mod:`neuroneval.published`.
"""

from neuroneval.fidelity.claims.common import COLUMNS, PAPER_SOURCES, VERDICT_RULES, VERDICTS, Claim, claims_frame
from neuroneval.fidelity.claims.paper_000_ranking import setting_claims, shift_claims, table4_claims
from neuroneval.fidelity.claims.paper_000_sanity import (
    closed_form_claims,
    reference_cells,
    reference_mode_claims,
    table3_claims,
)
from neuroneval.fidelity.claims.paper_001 import (
    EXPLAIN_BASELINES,
    broden_claims,
    crowd_agreement_claims,
    crowd_claims,
    crowd_le_claims,
    le_best_claims,
)
from neuroneval.fidelity.claims.paper_002 import cosy_benchmark_claims, cosy_claims
from neuroneval.fidelity.claims.paper_004 import concepteval_claims

__all__ = [
    "COLUMNS",
    "EXPLAIN_BASELINES",
    "PAPER_SOURCES",
    "VERDICTS",
    "VERDICT_RULES",
    "Claim",
    "broden_claims",
    "claims_frame",
    "closed_form_claims",
    "concepteval_claims",
    "cosy_benchmark_claims",
    "cosy_claims",
    "crowd_agreement_claims",
    "crowd_claims",
    "crowd_le_claims",
    "le_best_claims",
    "reference_cells",
    "reference_mode_claims",
    "setting_claims",
    "shift_claims",
    "table3_claims",
    "table4_claims",
]

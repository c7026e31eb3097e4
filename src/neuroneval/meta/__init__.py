"""Meta-evaluation of metrics on units with known concepts: meta-AUPRC (000 Eq. 13) and Table 4."""

from neuroneval.meta.auprc import meta_auprc, truth_mask
from neuroneval.meta.search import MetaResult, evaluate_metric, hyperparameter_grid, scoring_order, split_units
from neuroneval.meta.table4 import build_table4

__all__ = [
    "MetaResult",
    "build_table4",
    "evaluate_metric",
    "hyperparameter_grid",
    "meta_auprc",
    "scoring_order",
    "split_units",
    "truth_mask",
]

"""Meta-evaluation of metrics on units with known concepts: meta-AUPRC (000 Eq. 13) and Table 4."""

from neuroneval.meta.auprc import meta_auprc, own_concept_first, truth_mask
from neuroneval.meta.ceiling import IDEAL_SOURCES, ceiling_frame, ideal_units_from_labels
from neuroneval.meta.search import MetaResult, evaluate_metric, hyperparameter_grid, scoring_order, split_units
from neuroneval.meta.setting import MetaOptions, evaluate_setting, validation_split
from neuroneval.meta.table4 import build_table4

__all__ = [
    "IDEAL_SOURCES",
    "MetaOptions",
    "MetaResult",
    "build_table4",
    "ceiling_frame",
    "evaluate_metric",
    "evaluate_setting",
    "hyperparameter_grid",
    "ideal_units_from_labels",
    "meta_auprc",
    "own_concept_first",
    "scoring_order",
    "split_units",
    "truth_mask",
    "validation_split",
]

"""The floor and the ceiling of every method table: random explanations and the world's own truth.

Random: each unit gets ``length`` distinct concepts drawn uniformly (OR-ed when more than one), from a generator
seeded by ``(seed, crc32(unit name))`` so a unit's draw does not depend on which other units are explained.

Truth: the concepts a setting's ground truth gives the unit (``data/truth/<setting>.csv``, docs/design.md §2.2),
OR-ed when a unit has several; units without truth are left out.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from neuroneval.explain.explanation import Concept, Formula, Or, explanation_frame
from neuroneval.explain.options import RandomOptions


def _disjunction(names: Sequence[str]) -> Formula:
    formula: Formula = Concept(names[0])
    for name in names[1:]:
        formula = Or(formula, Concept(name))
    return formula


def random_explanations(unit_names: Sequence[str], concept_names: Sequence[str],
                        options: RandomOptions | None = None) -> pd.DataFrame:
    """One random explanation per unit (kind ``concept`` or an OR ``formula``)."""
    options = options or RandomOptions()
    concept_names = [str(name) for name in concept_names]
    if options.length > len(concept_names):
        raise ValueError(f"RandomOptions.length {options.length} exceeds the {len(concept_names)} concepts")
    explanations = []
    for unit in unit_names:
        rng = np.random.default_rng([options.seed, zlib.crc32(str(unit).encode("utf-8"))])
        picked = rng.choice(len(concept_names), size=options.length, replace=False)
        explanations.append(_disjunction([concept_names[t] for t in picked]))
    return explanation_frame([str(unit) for unit in unit_names], explanations)


def truth_explanations(truth: pd.DataFrame | Mapping[str, Sequence[str]],
                       unit_names: Sequence[str] | None = None) -> pd.DataFrame:
    """The ground truth as explanations: ``truth`` is a ``unit,concept`` table or a unit → concepts mapping.

    ``unit_names`` orders (and restricts) the rows; units absent from the truth are skipped.
    """
    if isinstance(truth, pd.DataFrame):
        missing = {"unit", "concept"} - set(truth.columns)
        if missing:
            raise ValueError(f"a truth table has columns unit, concept; missing {sorted(missing)}")
        mapping: dict[str, list[str]] = {}
        for unit, concept in zip(truth["unit"].astype(str), truth["concept"].astype(str), strict=True):
            mapping.setdefault(unit, []).append(concept)
    else:
        mapping = {str(unit): [str(c) for c in concepts] for unit, concepts in truth.items()}
    order = list(mapping) if unit_names is None else [str(u) for u in unit_names if str(u) in mapping]
    explanations = [_disjunction(list(dict.fromkeys(mapping[unit]))) for unit in order if mapping[unit]]
    return explanation_frame([unit for unit in order if mapping[unit]], explanations)

"""The ceiling of every explanation-method table: the planted truth scored on the world's ideal unit.

A method's explanation is scored on a *trained* unit, which also responds to whatever it confuses with its concept;
so the planted truth scored on that unit (the ``truth`` row) is no upper bound — a longer explanation can fit the
confusions. The ceiling (row :data:`IDEAL`) scores the truth explanation ``E_T`` of a unit with truth concepts ``T``
on the world's ideal unit for ``T`` instead,

    a*(x) = P(c_T | x),

the generative process's probability of the truth (:func:`~neuroneval.meta.ideal_units.load_ideal_units`, the
units of the identifiability ceiling of ``results/ceiling.csv``): in a deterministic world (the vision world) the truth
concept's label, the union ``max_{t∈T} c_t(x)`` when ``T`` has several concepts OR-ed (also a hidden unit's
IoU-chosen truth concept); in a stochastic world (the text world's next tokens) the generator's probability table
(pseudo-model ``ideal``, :func:`neuroneval.settings.ideal_activation_paths`). Each scorer then scores ``E_T`` on
``a*`` exactly as it scores every method on the trained units:

- simulation correlation (001 App. B.2, Eq. 14–18) and the NeuronEval metrics: :func:`ideal_scores`; on labels the
  fuzzy-logic simulation of ``E_T`` is ``1 − Π_t (1 − c_t) = max_t c_t = a*``, so ρ = 1 (0 where ``a*`` is
  constant on the held-out inputs, the engine's convention);
- CoSy AUC / MAD (002 Eq. 3–4): :func:`neuroneval.method_eval.cosy_table3.ideal_cosy_scores`; ``a*`` on the
  control images is their labels, on the synthetic images of ``E_T``'s prompt the presence of the concept — 1 on
  every image of a generator that renders exactly the prompt's concept
  (:data:`neuroneval.method_eval.cosy_table3.CONCEPT_RENDERING_GENERATORS`), undefined (NaN) for a generator whose
  images carry no labels;
- the simulated crowd (001 Sec. 4–5): :func:`neuroneval.method_eval.crowd_table3.ideal_crowd_scores` on ``a*``.

The CoSy and crowd ceilings live with their scorers in :mod:`neuroneval.method_eval`, the layer above ``explain``,
``cosy`` and ``crowd``; this module imports neither of the latter two.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

#: Method name of the ceiling rows in every score table (the truth explanation on the world's ideal unit).
IDEAL = "ideal"


def ideal_scores(truth: pd.DataFrame, ideal: pd.DataFrame, concepts: Any, concept_names: Sequence[str], *,
                 options: Any = None, source: str = IDEAL) -> pd.DataFrame:
    """Simulation correlation and the NeuronEval metrics of the truth explanations on the ideal units.

    ``truth`` is the ``truth`` explanation file (:func:`~neuroneval.explain.truth_explanations`), ``ideal`` the
    ideal units' activations on the held-out inputs (one column per unit,
    :func:`~neuroneval.meta.ideal_units.load_ideal_units`) and ``concepts`` the concept values the simulation
    reads (001 Eq. 14–18) on the same inputs. Units of ``truth`` without an ideal column are left out. Same columns as
    :func:`~neuroneval.explain.simulate.score_explanations`.
    """
    from neuroneval.explain.simulate import score_explanations

    columns = set(ideal.columns.astype(str))
    kept = truth[truth["unit"].astype(str).isin(columns)].reset_index(drop=True)
    return score_explanations(kept, ideal, concepts, concept_names, source=source, options=options)

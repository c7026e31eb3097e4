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
- CoSy AUC / MAD (002 Eq. 3–4): :func:`ideal_cosy_scores`; ``a*`` on the control images is their labels, on the
  synthetic images of ``E_T``'s prompt the presence of the concept — 1 on every image of a generator that renders
  exactly the prompt's concept (:data:`CONCEPT_RENDERING_GENERATORS`), undefined (NaN) for a generator whose images
  carry no labels;
- the simulated crowd (001 Sec. 4–5): :func:`neuroneval.explain.crowd_benchmark.crowd_unit_scores` on ``a*``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

#: Method name of the ceiling rows in every score table (the truth explanation on the world's ideal unit).
IDEAL = "ideal"
#: CoSy generators whose images show exactly the prompt's concept: the oracle renderer fixes the attributes the
#: concept's words name (:meth:`neuroneval.cosy.generators.OracleGenerator.parse`), so ``a* = 1`` on its images.
CONCEPT_RENDERING_GENERATORS = ("oracle",)
#: Why the ideal unit has no CoSy score under any other generator (written to the step's log and docs/explain.md).
UNDEFINED_REASON = ("the ideal unit is undefined on {generator} images: they carry no concept labels, so "
                    "P(c_T | x) of a synthetic image is unknown (ideal CoSy scores left NaN)")


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


def ideal_cosy_scores(prompts: pd.DataFrame, *, unit_names: Sequence[str], control: np.ndarray,
                      manifest: pd.DataFrame, template: str, generator: str) -> pd.DataFrame:
    """CoSy AUC (002 Eq. 3) and MAD (Eq. 4) of the truth explanations on the ideal units (method :data:`IDEAL`).

    ``prompts`` are the ``truth`` rows of :func:`~neuroneval.explain.cosy_benchmark.prompt_table` of one setting,
    ``control`` (n, K) the ideal units ``a*`` on the control images (columns ``unit_names``). On a generator of
    :data:`CONCEPT_RENDERING_GENERATORS` ``a* = 1`` on every synthetic image of a unit's prompt, so with ``p`` the
    share of control images showing the concept ``AUC = (1 − p) + p/2 = 1 − p/2`` and
    ``MAD = (1 − p) / std(A0)`` (0 where no control image shows it: a constant control set, the reference
    code's rule of :func:`~neuroneval.cosy.scoring.mad_from_difference`; AUC is 1 there); on any other generator
    the scores are NaN (:data:`UNDEFINED_REASON`).
    """
    from neuroneval.explain.cosy_benchmark import COSY_SCORE_COLUMNS, cosy_unit_scores

    prompts = prompts.assign(method=IDEAL)
    if generator in CONCEPT_RENDERING_GENERATORS:
        synthetic = np.ones((len(manifest), len(unit_names)), dtype=np.float64)
        return cosy_unit_scores(prompts, unit_names=unit_names, control=np.asarray(control, dtype=np.float64),
                                synthetic=synthetic, manifest=manifest, template=template, generator=generator)
    rows = prompts.assign(generator=generator, auc=np.nan, mad=np.nan, n_synthetic=0, n_control=len(control))
    return rows.reindex(columns=COSY_SCORE_COLUMNS)


def ideal_crowd_scores(truth: pd.DataFrame, ideal: np.ndarray, unit_names: Sequence[str], *, setting: str,
                       labels: np.ndarray, pseudo: np.ndarray | None, concept_names: Sequence[str],
                       options: Any) -> pd.DataFrame:
    """The simulated crowd study (001 Sec. 4–5) of the truth explanations on the ideal units (method :data:`IDEAL`).

    ``truth`` holds the ``truth`` explanation rows of the studied units, ``ideal`` (n, K) the ideal units over
    ``unit_names`` on the held-out inputs (:func:`~neuroneval.meta.ideal_units.load_ideal_units`), ``labels`` /
    ``pseudo`` the concept values on the same inputs; units without an ideal column are left out. Same rows as
    :func:`~neuroneval.explain.crowd_benchmark.crowd_unit_scores`, which runs the study exactly as for every method.
    """
    from neuroneval.explain.cosy_benchmark import shown_concepts
    from neuroneval.explain.crowd_benchmark import crowd_unit_scores

    kept = truth[truth["unit"].astype(str).isin(set(map(str, unit_names)))]
    return crowd_unit_scores(setting=setting, method=IDEAL, units=kept["unit"].astype(str).tolist(),
                             concepts=shown_concepts(kept), activations=ideal, unit_names=unit_names, labels=labels,
                             pseudo=pseudo, concept_names=concept_names, options=options)

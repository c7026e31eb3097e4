"""The explanation methods' simple explanations scored by CoSy (paper 002 Sec. 3 and Table 3).

A simple (l = 1) explanation shows one concept (:func:`neuroneval.cosy.shown_concept.shown_concept`); its text is
the world's prompt words for that concept (:func:`neuroneval.cosy.evaluation.concept_text`, e.g.
``class:red_striped_circle`` → "a red striped circle"), put in a prompt template and rendered by a text-to-image
generator. CoSy then compares the unit's activations on those synthetic images (``A1``, m values) with its
activations on control images (``A0``, n values):

- AUC (002 Eq. 3): ``Σ_{a∈A0} Σ_{b∈A1} 1[a < b] / (n m)`` (ties ½);
- MAD (002 Eq. 4): ``(mean(A1) − mean(A0)) / std(A0)``,

both from :func:`neuroneval.cosy.scoring.cosy_scores`. Explanations that share a text share their images (the
image plan keeps one set per distinct prompt), so methods that agree cost nothing extra. The ceiling rows
(:func:`ideal_cosy_scores`) score the truth explanations on the world's ideal units
(:mod:`neuroneval.explain.ideal`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from neuroneval.options import Options, OptionsError, check_range

#: Columns of the prompt table (one row per setting, method and unit).
PROMPT_COLUMNS = ["setting", "method", "unit", "concept", "explanation"]
#: Columns of the per-unit CoSy scores.
COSY_SCORE_COLUMNS = [*PROMPT_COLUMNS, "generator", "auc", "mad", "n_synthetic", "n_control"]
#: CoSy generators whose images show exactly the prompt's concept: the oracle renderer fixes the attributes the
#: concept's words name (:meth:`neuroneval.cosy.generators.OracleGenerator.parse`), so the ideal unit ``a* = 1`` on
#: its images (:func:`ideal_cosy_scores`).
CONCEPT_RENDERING_GENERATORS = ("oracle",)
#: Why the ideal unit has no CoSy score under any other generator (written to the step's log and docs/explain.md).
UNDEFINED_REASON = ("the ideal unit is undefined on {generator} images: they carry no concept labels, so "
                    "P(c_T | x) of a synthetic image is unknown (ideal CoSy scores left NaN)")


@dataclass(frozen=True)
class CosyBenchmarkOptions(Options):
    """The ``explain.cosy`` block: which explanations CoSy scores, and how many images it spends on them.

    Attributes
    ----------
    settings
        Explained settings (names of ``explain.settings``) whose units are scored; each probes one world classifier.
    methods
        Method files of Table 1 scored (``netdissect``, ``le_label_l1``, ...); the baselines ``random_l1`` and
        ``truth`` are always added.
    generators
        Image sources (``oracle``, ``embedded``, ``diffusers``; see :mod:`neuroneval.cosy.generators`).
    max_units
        Units per setting (the seed-hashed subset of :func:`neuroneval.cosy.evaluation.select_units`); None = all.
    n_images
        Synthetic images per distinct explanation text (paper 002: 50).
    n_control
        Control images: the first ``n_control`` held-out inputs of the setting (None = all of them).
    template
        Prompt template (:data:`neuroneval.cosy.prompts.TEMPLATES`; the paper's object default ``closeup``).
    batch_size
        Images per ``generate`` call (the images do not depend on it).
    seed
        Seed of the unit subset.
    """

    settings: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    generators: tuple[str, ...] = ("oracle",)
    max_units: int | None = None
    n_images: int = 10
    n_control: int | None = None
    template: str = "closeup"
    batch_size: int = 64
    seed: int = 0

    def validate(self) -> None:
        from neuroneval.cosy.options import GENERATOR_NAMES
        from neuroneval.cosy.prompts import fill_template

        unknown = [name for name in self.generators if name not in GENERATOR_NAMES]
        if not self.generators or unknown:
            raise OptionsError(f"CosyBenchmarkOptions.generators must name one or more of {list(GENERATOR_NAMES)}, "
                               f"got {list(self.generators)}")
        for name in ("max_units", "n_control"):
            if getattr(self, name) is not None:
                check_range(self, name, 1, integer=True)
        check_range(self, "n_images", 1, integer=True)
        check_range(self, "batch_size", 1, integer=True)
        check_range(self, "seed", 0, integer=True)
        try:
            fill_template(self.template, "x")
        except ValueError as error:
            raise OptionsError(f"CosyBenchmarkOptions.template: {error}") from error


def prompt_table(explanations: Mapping[tuple[str, str], pd.DataFrame], *, max_units: int | None, seed: int,
                 display_names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The text each explanation shows (rows of :data:`PROMPT_COLUMNS`; ``concept``/``explanation`` empty where
    an explanation shows no single concept).

    ``explanations`` maps (setting, method file) to its explanation file; each setting's units are the
    :func:`~neuroneval.cosy.evaluation.select_units` subset of its first file's units (every method scores the
    same units).
    """
    from neuroneval.cosy.evaluation import concept_text, select_units
    from neuroneval.cosy.shown_concept import shown_concepts

    rows = []
    chosen: dict[str, set[str]] = {}
    for (setting, method), frame in explanations.items():
        units = frame["unit"].astype(str).tolist()
        if setting not in chosen:
            chosen[setting] = set(select_units(units, max_units, seed=seed))
        for unit, concept in zip(units, shown_concepts(frame), strict=True):
            if unit in chosen[setting]:
                text = concept_text(concept, display_names) if concept else ""
                rows.append((setting, method, unit, concept or "", text))
    return pd.DataFrame(rows, columns=PROMPT_COLUMNS)


def cosy_unit_scores(prompts: pd.DataFrame, *, unit_names: Sequence[str], control: np.ndarray,
                     synthetic: np.ndarray, manifest: pd.DataFrame, template: str, generator: str) -> pd.DataFrame:
    """AUC (002 Eq. 3) and MAD (Eq. 4) of every row of a prompt table (one setting) on one generator's images.

    Parameters
    ----------
    prompts
        Rows of :func:`prompt_table` for one setting; rows without a text get NaN scores.
    unit_names
        Columns of ``control`` and ``synthetic``.
    control
        (n, K) activations of the units on the control images.
    synthetic
        (M, K) activations on the images of ``manifest`` (same row order).
    manifest
        The image manifest (:mod:`neuroneval.cosy.synthesis`) holding every prompt's images.
    """
    from neuroneval.cosy.evaluation import image_rows
    from neuroneval.cosy.prompts import fill_template
    from neuroneval.cosy.scoring import cosy_scores

    column = {str(name): position for position, name in enumerate(unit_names)}
    rows = []
    for record in prompts.itertuples(index=False):
        if record.unit not in column:
            raise ValueError(f"setting {record.setting}: unit {record.unit!r} is not a column of the activations")
        auc = mad = np.nan
        n_synthetic = 0
        if record.explanation:
            images = image_rows(manifest, fill_template(template, record.explanation))
            k = column[record.unit]
            scores = cosy_scores(control[:, k], synthetic[images, k])
            auc, mad, n_synthetic = float(scores["auc"][0]), float(scores["mad"][0]), len(images)
        rows.append({**record._asdict(), "generator": generator, "auc": auc, "mad": mad,
                     "n_synthetic": n_synthetic, "n_control": len(control)})
    return pd.DataFrame(rows, columns=COSY_SCORE_COLUMNS)


def ideal_cosy_scores(prompts: pd.DataFrame, *, unit_names: Sequence[str], control: np.ndarray,
                      manifest: pd.DataFrame, template: str, generator: str) -> pd.DataFrame:
    """CoSy AUC (002 Eq. 3) and MAD (Eq. 4) of the truth explanations on the ideal units (method
    :data:`~neuroneval.explain.ideal.IDEAL`).

    ``prompts`` are the ``truth`` rows of :func:`prompt_table` of one setting, ``control`` (n, K) the ideal units
    ``a*`` on the control images (columns ``unit_names``). On a generator of
    :data:`CONCEPT_RENDERING_GENERATORS` ``a* = 1`` on every synthetic image of a unit's
    prompt, so with ``p`` the share of control images showing the concept ``AUC = (1 − p) + p/2 = 1 − p/2`` and
    ``MAD = (1 − p) / std(A0)`` (0 where no control image shows it: a constant control set, the reference
    code's rule of :func:`~neuroneval.cosy.scoring.mad_from_difference`; AUC is 1 there); on any other generator
    the scores are NaN (:data:`UNDEFINED_REASON`).
    """
    from neuroneval.explain.ideal import IDEAL

    prompts = prompts.assign(method=IDEAL)
    if generator in CONCEPT_RENDERING_GENERATORS:
        synthetic = np.ones((len(manifest), len(unit_names)), dtype=np.float64)
        return cosy_unit_scores(prompts, unit_names=unit_names, control=np.asarray(control, dtype=np.float64),
                                synthetic=synthetic, manifest=manifest, template=template, generator=generator)
    rows = prompts.assign(generator=generator, auc=np.nan, mad=np.nan, n_synthetic=0, n_control=len(control))
    return rows.reindex(columns=COSY_SCORE_COLUMNS)

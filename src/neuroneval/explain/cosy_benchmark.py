"""The explanation methods' simple explanations scored by CoSy (paper 002 Sec. 3 and Table 3).

A simple (l = 1) explanation shows one concept (:func:`shown_concept`); its text is the world's prompt words for
that concept (:func:`neuroneval.cosy.evaluation.concept_text`, e.g. ``class:red_striped_circle`` → "a red striped
circle"), put in a prompt template and rendered by a text-to-image generator. CoSy then compares the unit's
activations on those synthetic images (``A1``, m values) with its activations on control images (``A0``, n values):

- AUC (002 Eq. 3): ``Σ_{a∈A0} Σ_{b∈A1} 1[a < b] / (n m)`` (ties ½);
- MAD (002 Eq. 4): ``(mean(A1) − mean(A0)) / std(A0)``,

both from :func:`neuroneval.cosy.scoring.cosy_scores`. Explanations that share a text share their images (the
image plan keeps one set per distinct prompt), so methods that agree cost nothing extra.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from neuroneval.explain.explanation import Concept, Explanation, Linear, parse
from neuroneval.options import Options, OptionsError, check_range

#: Columns of the prompt table (one row per setting, method and unit).
PROMPT_COLUMNS = ["setting", "method", "unit", "concept", "explanation"]
#: Columns of the per-unit CoSy scores.
COSY_SCORE_COLUMNS = [*PROMPT_COLUMNS, "generator", "auc", "mad", "n_synthetic", "n_control"]


def shown_concept(explanation: Explanation) -> str | None:
    """The one concept a simple explanation shows a generator or a rater, or ``None`` when it shows none.

    A :class:`Concept` shows its name; a :class:`Linear` explanation the concept of its largest positive weight
    (``0.3·a + 0.1·b`` shows ``a``; with no positive weight it predicts no presence of anything and shows none);
    formulas with operators, clustered and text explanations show no single concept.

    >>> shown_concept(parse("0.2*class:a + 0.5*class:b + 0.1", "linear")), shown_concept(parse("NOT class:a"))
    ('class:b', None)
    """
    if isinstance(explanation, Concept):
        return explanation.name
    if isinstance(explanation, Linear):
        positive = [(weight, name) for name, weight in explanation.weights if weight > 0]
        return max(positive)[1] if positive else None
    return None


def shown_concepts(frame: pd.DataFrame) -> list[str | None]:
    """:func:`shown_concept` of every row of an explanation file (columns ``explanation``, ``kind``)."""
    return [shown_concept(parse(text, kind)) for text, kind in zip(frame["explanation"], frame["kind"], strict=True)]


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

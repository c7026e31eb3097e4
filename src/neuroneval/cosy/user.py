"""CoSy (paper 002) on a user's explanation file: each unit's explanation against a random one, as in Table 2.

The explanation file is the project's explanation CSV (``unit, explanation, length, kind, …``, read with
:func:`neuroneval.explain.read_explanations`). Each row becomes the words a generator draws
(:func:`prompt_words`): a concept in words (:func:`neuroneval.cosy.evaluation.concept_text`), a formula with its
operators in words, a linear explanation's concept of largest positive weight, a text as written. The words go
into a prompt template (:mod:`neuroneval.cosy.prompts`), the generator draws ``n_images`` images per distinct
prompt (:func:`neuroneval.cosy.synthesis.synthesize`, resumable), and the explained model's layer is recorded on
them and on the control images (:func:`neuroneval.cosy.activations.classifier_units`, as the ``cosy_evaluate``
rule does). Each unit's activations on the images of its explanation (``A1``, m values) are compared with its
activations on the control images (``A0``, n values) by :func:`neuroneval.cosy.scoring.cosy_scores`:

- AUC (Eq. 3) ``= U / (n m)``, MAD (Eq. 4) ``= (mean(A1) − mean(A0)) / std(A0)``;
- ``u``: the Mann–Whitney U of the synthetic sample; ``p_value``: the two-sided Mann–Whitney test (exact for
  small samples without ties, else asymptotic; scipy's ``method="auto"`` rule per unit).

The random explanation of a unit (``method = random``) is the explanation of another unit of the file whose
words differ, drawn from ``(seed, unit)``; true and random rows side by side reproduce the pattern of paper 002
Table 2 (true AUC near 1, random near 0.5).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from neuroneval.options import Options, OptionsError, check_choice, check_range, check_text

#: Columns of the per-unit table (``results/cosy/user/<name>.csv``, ``neuroneval cosy --out``).
USER_SCORE_COLUMNS = ["unit", "method", "explanation", "kind", "prompt", "auc", "mad", "u", "p_value",
                      "n_synthetic", "n_control"]
#: The key of ``cosy:`` whose entries (:class:`CosyUserEntry`) only rule ``cosy_user`` reads; the workflow hands the
#: other rules the block without it, so adding an entry reruns nothing else.
USER_BLOCK = "user_explanations"
#: The explanation rows (``true``) and the drawn baseline (``random``).
USER_METHODS = ("true", "random")


@dataclass(frozen=True)
class UserCosyOptions(Options):
    """How a user's explanations are scored: ``n_images`` images per explanation under the prompt ``template``,
    generation seed ``seed`` (also the draw of the random explanations), ``random`` adds the random baseline,
    ``n_control`` keeps the first control images (``None`` = all), ``batch_size`` images per generator call and
    model batch, ``pooling`` of spatial modules (as the ``activations:`` block)."""

    n_images: int = 20
    template: str = "closeup"
    seed: int = 0
    random: bool = True
    n_control: int | None = None
    batch_size: int = 64
    pooling: str = "mean"

    def validate(self) -> None:
        from neuroneval.cosy.prompts import fill_template

        check_range(self, "n_images", 1, integer=True)
        check_range(self, "seed", 0, integer=True)
        check_range(self, "batch_size", 1, integer=True)
        if self.n_control is not None:
            check_range(self, "n_control", 1, integer=True)
        if not isinstance(self.random, bool):
            raise OptionsError(f"UserCosyOptions.random must be a boolean, got {self.random!r}")
        try:
            fill_template(self.template, "x")
        except ValueError as error:
            raise OptionsError(f"UserCosyOptions.template: {error}") from error


@dataclass(frozen=True)
class CosyUserEntry(UserCosyOptions):
    """One entry of ``cosy.user_explanations`` (rule ``cosy_user``): the ``explanations`` CSV, the ``setting``
    (of ``settings``, a vision-world classifier table) whose model, layer and probing split (the control images)
    it explains, the ``generator`` (:data:`~neuroneval.cosy.options.GENERATOR_NAMES`, options from its
    ``cosy.<generator>`` block), and the scoring options of :class:`UserCosyOptions`."""

    explanations: str = ""
    setting: str = ""
    generator: str = "oracle"

    def validate(self) -> None:
        from neuroneval.cosy.options import GENERATOR_NAMES

        super().validate()
        check_text(self, "explanations")
        check_text(self, "setting")
        check_choice(self, "generator", GENERATOR_NAMES)


def prompt_words(text: str, kind: str, display_names: Mapping[str, str] | None = None) -> str:
    """The words a generator draws for one explanation of the explanation CSV (``explanation``, ``kind``).

    ``concept``: :func:`~neuroneval.cosy.evaluation.concept_text`; ``formula``: its concepts in words joined by
    ``and``, ``or``, ``not``; ``linear``: the concept of largest positive weight
    (:func:`~neuroneval.cosy.shown_concept.shown_concept`); ``text``: as written. Raises ``ValueError`` for
    a clustered explanation or a linear one without a positive weight (no single picture to draw).

    >>> prompt_words("class:red_striped_circle", "concept"), prompt_words("shape:circle AND NOT scene:grass", None)
    ('a red striped circle', 'a circle and not on grass')
    """
    from neuroneval.cosy.evaluation import concept_text
    from neuroneval.cosy.shown_concept import shown_concept
    from neuroneval.explain.explanation import And, Concept, Linear, Not, Or, Text, parse

    explanation = parse(text, kind or None)

    def words(node: Any) -> str:
        if isinstance(node, Concept):
            return concept_text(node.name, display_names)
        if isinstance(node, Not):
            return f"not {words(node.operand)}"
        if isinstance(node, And | Or):
            return f"{words(node.left)} {'and' if isinstance(node, And) else 'or'} {words(node.right)}"
        raise ValueError(f"a {type(node).__name__.lower()} explanation has no picture CoSy can draw")

    if isinstance(explanation, Text):
        return explanation.description.strip()
    if isinstance(explanation, Linear):
        concept = shown_concept(explanation)
        if concept is None:
            raise ValueError(f"linear explanation {text!r} has no positive weight: it shows no concept to draw")
        return concept_text(concept, display_names)
    return words(explanation)


def user_prompts(explanations: pd.DataFrame, *, unit_names: Sequence[str], options: UserCosyOptions,
                 source: str, display_names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per (unit, method): ``row`` (the unit's row of the file), ``unit, method, explanation, kind, words``
    (the words to draw).

    ``explanations`` is a validated explanation table read from ``source``. Raises ``ValueError`` naming the
    source, the row (0-based, as :func:`~neuroneval.explain.read_explanations`) and the unit for a unit that is
    not a column of the model's layer, or an explanation without a picture; and when ``options.random`` asks for
    a random baseline but the file holds a single distinct explanation.
    """
    known = {str(name) for name in unit_names}
    rows = []
    for row, (unit, text, kind) in enumerate(zip(explanations["unit"].astype(str), explanations["explanation"],
                                                 explanations["kind"], strict=True)):
        if unit not in known:
            raise ValueError(f"{source}, row {row}: unit {unit!r} is not a unit of the model's layer "
                             f"(its units: {sorted(known)[:8]}{' ...' if len(known) > 8 else ''})")
        try:
            words = prompt_words(text, kind, display_names)
        except ValueError as error:
            raise ValueError(f"{source}, row {row} (unit {unit!r}): {error}") from error
        if not words:
            raise ValueError(f"{source}, row {row} (unit {unit!r}): empty explanation")
        rows.append({"row": row, "unit": unit, "method": "true", "explanation": text, "kind": kind, "words": words})
    true = pd.DataFrame(rows, columns=["row", "unit", "method", "explanation", "kind", "words"])
    if not options.random:
        return true
    random_rows = []
    for record in true.itertuples(index=False):
        others = true[true["words"] != record.words]
        if others.empty:
            raise ValueError(f"{source}: every unit has the explanation {record.words!r}; a random explanation "
                             "needs at least two distinct ones (or turn the random baseline off)")
        rng = np.random.default_rng([int(options.seed), zlib.crc32(record.unit.encode())])
        drawn = others.iloc[int(rng.integers(len(others)))]
        random_rows.append({"row": record.row, "unit": record.unit, "method": "random",
                            "explanation": drawn["explanation"], "kind": drawn["kind"], "words": drawn["words"]})
    return pd.concat([true, pd.DataFrame(random_rows)], ignore_index=True)


def check_drawable(generator: Any, prompts: pd.DataFrame, *, template: str, source: str) -> None:
    """Fail before generating when the generator reads prompts (the oracle) and cannot read one: ``ValueError``
    naming the source, the row and unit of :func:`user_prompts`, and the explanation (an unknown concept of the
    world)."""
    from neuroneval.cosy.prompts import fill_template

    parse = getattr(generator, "parse", None)
    if parse is None:
        return
    for record in prompts.itertuples(index=False):
        try:
            parse(fill_template(template, record.words))
        except ValueError as error:
            raise ValueError(f"{source}, row {record.row} (unit {record.unit!r}, {record.method} explanation "
                             f"{record.explanation!r}): the {getattr(generator, 'name', 'generator')} generator "
                             f"cannot draw it: {error}") from error


def user_scores(prompts: pd.DataFrame, *, unit_names: Sequence[str], control: np.ndarray, synthetic: np.ndarray,
                manifest: pd.DataFrame, template: str, generation_seed: int = 0,
                progress: bool = True) -> pd.DataFrame:
    """Rows of :data:`USER_SCORE_COLUMNS` for the rows of :func:`user_prompts`.

    ``control`` (n, K) and ``synthetic`` (M, K) are the layer's activations on the control images and on the
    images of ``manifest`` (same row order), with columns ``unit_names``; each explanation's images are those of
    its prompt under ``template`` and ``generation_seed``.
    """
    from neuroneval.cosy.evaluation import image_rows
    from neuroneval.cosy.prompts import fill_template
    from neuroneval.cosy.scoring import cosy_scores
    from neuroneval.progress import progress_bar

    column = {str(name): position for position, name in enumerate(unit_names)}
    rows = []
    for record in progress_bar(prompts.itertuples(index=False), total=len(prompts), desc="cosy scores",
                               unit="explanation", enabled=progress):
        k = column[record.unit]
        prompt = fill_template(template, record.words)
        images = image_rows(manifest, prompt, generation_seed)
        scores = cosy_scores(control[:, k], synthetic[images, k])
        rows.append({"unit": record.unit, "method": record.method, "explanation": record.explanation,
                     "kind": record.kind, "prompt": prompt, "auc": scores["auc"][0], "mad": scores["mad"][0],
                     "u": scores["u"][0], "p_value": scores["p_value"][0], "n_synthetic": len(images),
                     "n_control": len(control)})
    return pd.DataFrame(rows, columns=USER_SCORE_COLUMNS)


def score_explanations_on_units(explanations: pd.DataFrame, *, source: str, control: np.ndarray,
                                unit_names: Sequence[str], units_on_images: Callable[[np.ndarray], np.ndarray],
                                generator: Any, image_root: str | Path, options: UserCosyOptions,
                                display_names: Mapping[str, str] | None = None,
                                progress: bool = True) -> pd.DataFrame:
    """CoSy scores of an explanation file on any model's units, rows of :data:`USER_SCORE_COLUMNS`.

    The model-free core of :func:`score_user_explanations` (a world classifier) and ``neuroneval cosy`` on your
    own model: the prompts of :func:`user_prompts` are drawn by ``generator`` under ``image_root`` (resumable,
    :func:`~neuroneval.cosy.synthesis.synthesize`), ``units_on_images`` maps those ``(M, H, W, 3)`` uint8 images
    to the (M, K) activations of the units ``unit_names``, and :func:`user_scores` compares them with ``control``,
    the (n, K) activations on the control inputs.
    """
    from neuroneval.cosy.synthesis import load_images, plan_images, synthesize

    prompts = user_prompts(explanations, unit_names=unit_names, options=options, source=source,
                           display_names=display_names)
    check_drawable(generator, prompts, template=options.template, source=source)
    plan = plan_images(prompts["words"].tolist(), templates=[options.template], n_images=int(options.n_images),
                       generation_seeds=[int(options.seed)])
    manifest, _ = synthesize(generator, plan, image_root, batch_size=int(options.batch_size), progress=progress)
    synthetic = units_on_images(load_images(image_root, manifest["path"].tolist()))
    return user_scores(prompts, unit_names=unit_names, control=np.asarray(control, dtype=np.float64),
                       synthetic=np.asarray(synthetic, dtype=np.float64), manifest=manifest,
                       template=options.template, generation_seed=int(options.seed), progress=progress)


def score_user_explanations(explanations: pd.DataFrame, *, source: str, control_images: np.ndarray,
                            checkpoint: str | Path, layer: str, hierarchy: Mapping[str, Sequence[str]],
                            generator: Any, image_root: str | Path, options: UserCosyOptions,
                            display_names: Mapping[str, str] | None = None, progress: bool = True) -> pd.DataFrame:
    """CoSy scores of a user's explanation file on a world classifier (see the module docstring), rows of
    :data:`USER_SCORE_COLUMNS` (:func:`score_explanations_on_units`).

    Parameters
    ----------
    explanations
        A validated explanation table (:func:`neuroneval.explain.read_explanations`) read from ``source``.
    control_images
        (n, H, W, 3) uint8 control images; the first ``options.n_control`` are used.
    checkpoint, layer, hierarchy
        The world classifier whose ``layer`` units are explained (``softmax``, ``logits``, ``superclass``,
        ``concepts`` or a module name), and the world's class hierarchy (``superclass`` units).
    generator
        An :class:`~neuroneval.cosy.image_generator.ImageGenerator`; its images go under ``image_root``
        (resumable) and are resized to the control images' size before the classifier sees them.
    """
    from neuroneval.cosy.activations import classifier_units
    from neuroneval.cosy.synthesis import resize_images

    control_images = np.asarray(control_images)
    if control_images.ndim != 4 or control_images.shape[-1] != 3 or control_images.dtype != np.uint8:
        raise ValueError(f"control images must be (n, H, W, 3) uint8, got {control_images.shape} "
                         f"{control_images.dtype}")
    if control_images.shape[1] != control_images.shape[2]:
        raise ValueError(f"control images must be square, got {control_images.shape[1]}x{control_images.shape[2]}")
    if options.n_control is not None:
        control_images = control_images[: int(options.n_control)]
    extraction = {"layer": layer, "hierarchy": hierarchy, "batch_size": int(options.batch_size),
                  "pooling": options.pooling}
    control, unit_names = classifier_units(checkpoint, control_images, **extraction)

    def units_on_images(images: np.ndarray) -> np.ndarray:
        return classifier_units(checkpoint, resize_images(images, control_images.shape[1]), **extraction)[0]

    return score_explanations_on_units(explanations, source=source, control=control, unit_names=unit_names,
                                       units_on_images=units_on_images, generator=generator, image_root=image_root,
                                       options=options, display_names=display_names, progress=progress)

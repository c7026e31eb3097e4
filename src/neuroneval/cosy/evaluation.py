"""CoSy on the embedded settings: explanations to test, the images they need, and every score and sanity table.

The sanity checks of paper 002 Sec. 4 run on final-layer class units, whose true explanation is their class:

- true vs random explanations, control set with and without the target class (Tables 2 and 6);
- synthetic vs natural images of the same class (Fig. 3: MAD of both against the control set);
- prompt templates by contrastive-embedding similarity of synthetic to natural images of the class (Fig. 2);
- seed stability: AUC over several generation seeds (Table 8);
- the generative concept source of paper 000 (Table 1, App. B.1): the synthetic images appended to the probing
  set with ``c_t = 1`` on them, scored by the metric engine: these concept vectors miss every natural positive.

Functions here take arrays and frames; file handling lives in :mod:`neuroneval.pipeline.cosy_steps`.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from neuroneval.cosy.options import CosyDistributionsOptions, CosyOptions, CosySeedsOptions, CosyTemplatesOptions
from neuroneval.cosy.prompts import fill_template
from neuroneval.cosy.scoring import cosy_scores
from neuroneval.cosy.synthesis import plan_images
from neuroneval.metrics import MetricOptions

EXPLANATION_COLUMNS = ["setting", "unit", "method", "concept", "explanation"]
CONTROLS = ("with_target", "without_target")


def select_units(unit_ids: Sequence[str], max_units: int | None, *, seed: int) -> list[str]:
    """At most ``max_units`` of ``unit_ids``, chosen by a hash of (seed, unit id), returned in their given order.

    The choice of a unit does not depend on the other units, so settings sharing unit ids share the subset.
    """
    unit_ids = [str(unit) for unit in unit_ids]
    if max_units is None or int(max_units) >= len(unit_ids):
        return unit_ids
    if int(max_units) < 1:
        raise ValueError(f"max_units must be >= 1 or null, got {max_units}")
    ranked = sorted(unit_ids, key=lambda unit: (zlib.crc32(f"{seed}/{unit}".encode()), unit))
    chosen = set(ranked[: int(max_units)])
    return [unit for unit in unit_ids if unit in chosen]


def concept_text(concept: str, display_names: Mapping[str, str] | None = None) -> str:
    """The explanation text of a concept column: its display name (real datasets, e.g. "tench"), else the vision
    world's caption words ("a red striped circle"), else the name made readable ("class:coffee_mug" -> "coffee mug").

    >>> concept_text("class:red_striped_circle"), concept_text("class:n01", {"class:n01": "tench"})
    ('a red striped circle', 'tench')
    """
    from neuroneval.worlds.vision_concepts import concept_prompt

    if display_names and display_names.get(concept):
        return str(display_names[concept])
    try:
        return concept_prompt(concept)
    except ValueError:
        return concept.partition(":")[2].replace("_", " ").strip() or concept


def explanation_table(truth: pd.DataFrame, *, setting: str, candidates: Sequence[str], max_units: int | None,
                      seed: int, display_names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """True and random explanations of a setting's units (rows of :data:`EXPLANATION_COLUMNS`).

    ``truth`` holds ``unit,concept`` (the first concept of a unit is its true one). The random explanation of a
    unit is a concept of ``candidates`` other than its true one, drawn from ``(seed, unit, true concept)``: the
    same unit with the same truth gets the same random explanation in every setting. Explanations are the
    concepts in words (:func:`concept_text`: display names of real datasets, caption words of the vision world).
    """
    if not {"unit", "concept"} <= set(truth.columns):
        raise ValueError(f"setting {setting}: truth table needs columns unit, concept; got {list(truth.columns)}")
    first = truth.astype({"unit": str}).drop_duplicates("unit")
    units = select_units(first["unit"].tolist(), max_units, seed=seed)
    concept_of = dict(zip(first["unit"], first["concept"], strict=True))
    candidates = list(dict.fromkeys(candidates))
    rows = []
    for unit in units:
        concept = concept_of[unit]
        others = [name for name in candidates if name != concept]
        if not others:
            raise ValueError(f"setting {setting}: no concept other than {concept!r} to draw a random explanation")
        rng = np.random.default_rng([int(seed), zlib.crc32(unit.encode()), zlib.crc32(concept.encode())])
        random_concept = others[int(rng.integers(len(others)))]
        rows.append((setting, unit, "true", concept, concept_text(concept, display_names)))
        rows.append((setting, unit, "random", random_concept, concept_text(random_concept, display_names)))
    return pd.DataFrame(rows, columns=EXPLANATION_COLUMNS)


def study_explanations(explanations: pd.DataFrame, count: int) -> list[str]:
    """The first ``count`` distinct true explanations (in table order): the subjects of the template/seed studies."""
    true = explanations.loc[explanations["method"] == "true", "explanation"]
    return list(dict.fromkeys(true))[: max(int(count), 0)]


def image_plan(explanations: pd.DataFrame, options: CosyOptions) -> pd.DataFrame:
    """Every image the CoSy tables need, for one generator (rows of :func:`~neuroneval.cosy.synthesis.plan_images`).

    Main set: each explanation under ``options.template``, generation seed 0, ``n_images`` images. Template
    study: the first ``templates.n_concepts`` true explanations under every template of ``templates.names``.
    Seed study: the first ``seeds.n_units`` true explanations under every seed of ``seeds.generation_seeds``.
    """
    n_images = int(options.n_images)
    parts = [plan_images(explanations["explanation"].tolist(), templates=[options.template], n_images=n_images)]
    template_subjects = study_explanations(explanations, options.templates.n_concepts)
    if template_subjects:
        parts.append(plan_images(template_subjects, templates=options.templates.names, n_images=n_images))
    seed_subjects = study_explanations(explanations, options.seeds.n_units)
    if seed_subjects:
        parts.append(plan_images(seed_subjects, templates=[options.template], n_images=n_images,
                                 generation_seeds=options.seeds.generation_seeds))
    plan = pd.concat(parts, ignore_index=True).drop_duplicates("path")
    return plan.sort_values("path", kind="stable").reset_index(drop=True)


def image_rows(manifest: pd.DataFrame, prompt: str, generation_seed: int = 0) -> np.ndarray:
    """Positions in ``manifest`` of the images of ``prompt`` under ``generation_seed``, by image index.

    Raises ``ValueError`` naming the prompt when the manifest has none (the image set was built for other
    explanations).
    """
    selected = manifest[(manifest["prompt"] == prompt) & (manifest["generation_seed"] == int(generation_seed))]
    if selected.empty:
        raise ValueError(f"the image manifest has no images of prompt {prompt!r} (generation seed "
                         f"{generation_seed}); regenerate the image set for these explanations")
    return selected.sort_values("image_index").index.to_numpy()


def score_table(explanations: pd.DataFrame, *, unit_names: Sequence[str], control: np.ndarray,
                target_labels: Mapping[str, np.ndarray], synthetic: np.ndarray, manifest: pd.DataFrame,
                template: str, generator: str) -> pd.DataFrame:
    """One row per (setting, unit, method, explanation, control set): AUC, MAD, Mann–Whitney U (of the synthetic
    sample) and two-sided p-value (:func:`~neuroneval.cosy.scoring.cosy_scores`), image counts.

    Parameters
    ----------
    explanations
        Rows of :func:`explanation_table` (one setting).
    unit_names
        Column names of ``control`` and ``synthetic``.
    control
        (n, K) activations on the control images (the probing set).
    target_labels
        ``{unit: (n,) bool}`` whether each control image shows the unit's true concept (left out of the
        ``without_target`` control set, Table 6).
    synthetic
        (M, K) activations on the images of ``manifest`` (same row order).
    """
    column = {name: position for position, name in enumerate(unit_names)}
    rows = []
    for record in explanations.itertuples(index=False):
        if record.unit not in column:
            raise ValueError(f"setting {record.setting}: unit {record.unit!r} is not a column of the activations "
                             f"(first columns: {list(unit_names)[:5]})")
        k = column[record.unit]
        prompt = fill_template(template, record.explanation)
        images = image_rows(manifest, prompt)
        for control_set in CONTROLS:
            keep = ~target_labels[record.unit] if control_set == "without_target" else slice(None)
            reference = control[keep, k]
            scores = cosy_scores(reference, synthetic[images, k])
            rows.append({"setting": record.setting, "generator": generator, "unit": record.unit,
                         "method": record.method, "concept": record.concept, "explanation": record.explanation,
                         "control": control_set, "auc": scores["auc"][0], "mad": scores["mad"][0],
                         "u": scores["u"][0], "p_value": scores["p_value"][0], "n_synthetic": len(images),
                         "n_control": len(reference)})
    return pd.DataFrame(rows)


def table2(scores: pd.DataFrame) -> pd.DataFrame:
    """Tables 2 and 6 of paper 002: mean ± std of AUC and MAD of true and random explanations.

    One row per (setting, generator, control set, method), with the number of units.
    """
    keys = ["setting", "generator", "control", "method"]
    grouped = scores.groupby(keys, sort=False)
    table = grouped.agg(auc_mean=("auc", "mean"), auc_std=("auc", "std"), mad_mean=("mad", "mean"),
                        mad_std=("mad", "std"), n_units=("unit", "nunique")).reset_index()
    order = {"true": 0, "random": 1}
    table = table.assign(_order=table["method"].map(order).fillna(2))
    return table.sort_values(["setting", "generator", "control", "_order"], kind="stable").drop(
        columns="_order").reset_index(drop=True)


def natural_table(explanations: pd.DataFrame, *, unit_names: Sequence[str], control: np.ndarray,
                  target_labels: Mapping[str, np.ndarray], synthetic: np.ndarray, manifest: pd.DataFrame,
                  template: str, generator: str) -> pd.DataFrame:
    """Synthetic vs natural images of a unit's own class (paper 002 Fig. 3).

    For each true explanation: MAD and AUC of the synthetic images and of the probing set's natural images of
    the class, both against the control images without the class.
    """
    column = {name: position for position, name in enumerate(unit_names)}
    rows = []
    for record in explanations[explanations["method"] == "true"].itertuples(index=False):
        k = column[record.unit]
        positive = target_labels[record.unit]
        if not positive.any():
            continue
        reference = control[~positive, k]
        natural = cosy_scores(reference, control[positive, k])
        images = image_rows(manifest, fill_template(template, record.explanation))
        generated = cosy_scores(reference, synthetic[images, k])
        rows.append({"setting": record.setting, "generator": generator, "unit": record.unit,
                     "concept": record.concept, "n_natural": int(positive.sum()), "n_synthetic": len(images),
                     "mad_natural": natural["mad"][0], "mad_synthetic": generated["mad"][0],
                     "auc_natural": natural["auc"][0], "auc_synthetic": generated["auc"][0],
                     "mean_natural": float(control[positive, k].mean()),
                     "mean_synthetic": float(synthetic[images, k].mean())})
    return pd.DataFrame(rows)


def mean_pairwise_cosine(first: np.ndarray, second: np.ndarray | None = None) -> float:
    """Mean cosine similarity over all pairs of rows (of ``first`` × ``second``, or distinct pairs of ``first``)."""
    a = first / np.linalg.norm(first, axis=1, keepdims=True)
    if second is None:
        if len(a) < 2:
            return float("nan")
        gram = a @ a.T
        return float((gram.sum() - np.trace(gram)) / (len(a) * (len(a) - 1)))
    b = second / np.linalg.norm(second, axis=1, keepdims=True)
    return float((a @ b.T).mean())


def template_table(explanations: pd.DataFrame, *, templates: CosyTemplatesOptions, manifest: pd.DataFrame,
                   synthetic_embeddings: np.ndarray, natural_embeddings: Mapping[str, np.ndarray],
                   generator: str) -> pd.DataFrame:
    """Prompt templates (paper 002 Fig. 2, Table 5): cosine similarity of synthetic to natural images of a class.

    One row per (generator, template, concept): mean cosine similarity of the contrastive model's image
    embeddings over all (synthetic, natural) pairs, and the intraclass similarity of the synthetic images; the
    first ``templates.n_concepts`` true explanations under every template of ``templates.names``.
    """
    concept_of = dict(zip(explanations["explanation"], explanations["concept"], strict=False))
    rows = []
    for explanation in study_explanations(explanations, templates.n_concepts):
        concept = concept_of[explanation]
        if concept not in natural_embeddings or len(natural_embeddings[concept]) == 0:
            continue
        for template in templates.names:
            images = image_rows(manifest, fill_template(template, explanation))
            rows.append({"generator": generator, "template": template,
                         "prompt_pattern": fill_template(template, "[concept]"), "concept": concept,
                         "cosine_to_natural": mean_pairwise_cosine(synthetic_embeddings[images],
                                                                   natural_embeddings[concept]),
                         "intraclass_cosine": mean_pairwise_cosine(synthetic_embeddings[images])})
    return pd.DataFrame(rows)


def seed_table(explanations: pd.DataFrame, *, seeds: CosySeedsOptions, template: str, unit_names: Sequence[str],
               control: np.ndarray, target_labels: Mapping[str, np.ndarray], synthetic: np.ndarray,
               synthetic_embeddings: np.ndarray | None, manifest: pd.DataFrame, generator: str) -> pd.DataFrame:
    """Seed stability (paper 002 Table 8): per unit, AUC/MAD over generation seeds (control without the class).

    One row per (setting, unit): mean and std over seeds of AUC, MAD and the intraclass cosine similarity of
    the images' embeddings (``nan`` without embeddings); the first ``seeds.n_units`` true explanations under
    ``template`` and every seed of ``seeds.generation_seeds``.
    """
    column = {name: position for position, name in enumerate(unit_names)}
    subjects = set(study_explanations(explanations, seeds.n_units))
    generation_seeds = [int(seed) for seed in seeds.generation_seeds]
    rows = []
    true = explanations[(explanations["method"] == "true") & explanations["explanation"].isin(subjects)]
    for record in true.itertuples(index=False):
        k = column[record.unit]
        reference = control[~target_labels[record.unit], k]
        prompt = fill_template(template, record.explanation)
        per_seed = []
        for seed in generation_seeds:
            images = image_rows(manifest, prompt, seed)
            scores = cosy_scores(reference, synthetic[images, k])
            intraclass = (float("nan") if synthetic_embeddings is None
                          else mean_pairwise_cosine(synthetic_embeddings[images]))
            per_seed.append((scores["auc"][0], scores["mad"][0], intraclass))
        values = np.array(per_seed)
        rows.append({"setting": record.setting, "generator": generator, "unit": record.unit,
                     "concept": record.concept, "n_seeds": len(generation_seeds),
                     "auc_mean": values[:, 0].mean(),
                     "auc_std": values[:, 0].std(ddof=1) if len(generation_seeds) > 1 else 0.0,
                     "mad_mean": values[:, 1].mean(),
                     "mad_std": values[:, 1].std(ddof=1) if len(generation_seeds) > 1 else 0.0,
                     "intraclass_cosine_mean": values[:, 2].mean(),
                     "intraclass_cosine_std": values[:, 2].std(ddof=1) if len(generation_seeds) > 1 else 0.0})
    return pd.DataFrame(rows)


def generative_table(explanations: pd.DataFrame, *, unit_names: Sequence[str], control: np.ndarray,
                     target_labels: Mapping[str, np.ndarray], synthetic: np.ndarray, manifest: pd.DataFrame,
                     template: str, metrics: Sequence[str], options: MetricOptions,
                     generator: str) -> pd.DataFrame:
    """The generative concept source of paper 000 (Table 1, App. B.1) scored by the metric engine.

    The synthetic images of every true explanation are appended to the probing set. For unit ``k`` with true
    concept ``t``, three concept vectors over the appended set:

    - ``complete``: 1 on the synthetic images of ``t`` and on the natural images labelled ``t``;
    - ``generative``: 1 on the synthetic images of ``t`` only (how generative evaluations define ``c_t``; every
      natural positive is a missing label);
    - ``natural``: the labels on the probing set alone (synthetic images left out).

    ``options`` (α, λ, …) are shared by the metrics, each taking the fields it has
    (:meth:`~neuroneval.metrics.MetricSpec.options_from`). Returns one row per (setting, metric, concept source):
    mean and std over units, and the fraction of positives the generative vector misses.
    """
    from neuroneval.metrics import get_spec, score_pairs

    column = {name: position for position, name in enumerate(unit_names)}
    true = explanations[explanations["method"] == "true"].drop_duplicates("unit")
    groups = [image_rows(manifest, fill_template(template, text)) for text in true["explanation"]]
    rows_synthetic = np.unique(np.concatenate(groups))
    position = {row: offset for offset, row in enumerate(rows_synthetic)}
    n_control = len(control)
    appended = np.concatenate([control, synthetic[rows_synthetic]])
    n_units = len(true)
    complete = np.zeros((len(appended), n_units), dtype=np.float32)
    generative = np.zeros_like(complete)
    natural = np.zeros((n_control, n_units), dtype=np.float32)
    missing = []
    for j, (record, images) in enumerate(zip(true.itertuples(index=False), groups, strict=True)):
        synthetic_rows = n_control + np.array([position[row] for row in images])
        labels = target_labels[record.unit].astype(np.float32)
        complete[:n_control, j] = labels
        complete[synthetic_rows, j] = 1.0
        generative[synthetic_rows, j] = 1.0
        natural[:, j] = labels
        missing.append(labels.sum() / (labels.sum() + len(images)))
    pairs = np.stack([[column[unit] for unit in true["unit"]], np.arange(n_units)], axis=1)
    rows = []
    for metric in metrics:
        for source, activations, concepts in (("complete", appended, complete), ("generative", appended, generative),
                                              ("natural", control, natural)):
            values = score_pairs(metric, activations, concepts, pairs, options=get_spec(metric).options_from(options))
            rows.append({"setting": true["setting"].iloc[0], "generator": generator, "metric": metric,
                         "concept_source": source, "mean": float(np.nanmean(values)),
                         "std": float(np.nanstd(values, ddof=1)) if n_units > 1 else 0.0, "n_units": n_units,
                         "missing_fraction": float(np.mean(missing)) if source == "generative" else 0.0})
    return pd.DataFrame(rows)


def sample_table(explanations: pd.DataFrame, *, distributions: CosyDistributionsOptions, template: str,
                 unit_names: Sequence[str], control: np.ndarray, synthetic: np.ndarray, manifest: pd.DataFrame,
                 generator: str) -> pd.DataFrame:
    """Activation values of a few units for the distribution figure: control sample, true and random images.

    The first ``distributions.n_units`` units of ``explanations`` (one setting): their first
    ``distributions.n_control`` control activations (group ``control``) and their activations on the images of
    each of their explanations under ``template`` (group = the explanation's method).
    """
    column = {name: position for position, name in enumerate(unit_names)}
    units = list(dict.fromkeys(explanations["unit"]))[: int(distributions.n_units)]
    n_control = int(distributions.n_control)
    setting = explanations["setting"].iloc[0]
    frames = []
    for unit in units:
        k = column[unit]
        frames.append(pd.DataFrame({"generator": generator, "setting": setting, "unit": unit, "group": "control",
                                    "concept": "", "activation": control[:n_control, k]}))
        for record in explanations[explanations["unit"] == unit].itertuples(index=False):
            rows = image_rows(manifest, fill_template(template, record.explanation))
            frames.append(pd.DataFrame({"generator": generator, "setting": setting, "unit": unit,
                                        "group": record.method, "concept": record.concept,
                                        "activation": synthetic[rows, k]}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def generative_summary(long: pd.DataFrame, *, tolerance: float) -> pd.DataFrame:
    """Per (setting, generator, metric): complete vs generative means, the normalised change and a verdict.

    ``delta = (generative − complete) / (max − min)`` with the width of the metric's value range; for metrics
    with an unbounded range (MAD, WPMI) the change relative to the complete score, ``/ |complete|``.
    ``verdict`` is ``stable`` when ``|delta| <= tolerance``, else ``drops`` or ``rises``. Metrics that stay
    stable cannot see the missing labels (they fail 000's Missing Labels test).
    """
    from neuroneval.sanity.delta import has_fixed_span, value_span

    wide = long.pivot_table(index=["setting", "generator", "metric"], columns="concept_source", values="mean",
                            sort=False).reset_index()
    missing = long[long["concept_source"] == "generative"].set_index(["setting", "generator", "metric"])[
        "missing_fraction"]
    deltas, verdicts = [], []
    for record in wide.itertuples(index=False):
        span = value_span(record.metric) if has_fixed_span(record.metric) else abs(record.complete)
        delta = (record.generative - record.complete) / span if span > 0 else float("nan")
        deltas.append(delta)
        verdicts.append("stable" if abs(delta) <= tolerance else ("drops" if delta < 0 else "rises"))
    wide = wide.assign(delta=deltas, verdict=verdicts,
                       missing_fraction=[missing.loc[(s, g, m)] for s, g, m in
                                         zip(wide["setting"], wide["generator"], wide["metric"], strict=True)])
    wide.columns.name = None
    return wide[["setting", "generator", "metric", "natural", "complete", "generative", "delta", "verdict",
                 "missing_fraction"]]

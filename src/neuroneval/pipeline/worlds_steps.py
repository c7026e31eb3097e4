"""Workflow steps of the worlds stage (``worlds.smk``): the embedded vision and text worlds, the digits world,
and the report that sets each setting's world, models and concept sources beside their baselines.

One function per Snakemake rule (same name), each taking a :class:`~neuroneval.pipeline.runner.StepIO`: read
inputs, call the library (:mod:`neuroneval.worlds`), write outputs.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from neuroneval import io
from neuroneval.pipeline.runner import StepIO


def vision_world(job: StepIO) -> None:
    """Render the embedded vision world's split ``{split}`` into a directory (written whole, then renamed)."""
    from neuroneval.worlds import save_vision_world
    from neuroneval.worlds.vision import VisionWorldOptions, build_vision_world_split

    options = VisionWorldOptions.from_params(job.params.world)
    world = build_vision_world_split(options, job.wildcards.split, int(job.params.n_images))
    with io.atomic_directory(job.output[0]) as staging:
        save_vision_world(world, staging)


def text_world(job: StepIO) -> None:
    """Generate split ``{split}`` of the text world; splits other than ``train`` reuse the train vocabulary."""
    from neuroneval.worlds.text import TextWorldOptions, build_text_world_split, load_text_world, save_text_world

    options = TextWorldOptions.from_params(job.params.world)
    split = job.wildcards.split
    vocabulary = None if split == "train" else load_text_world(Path(job.input.train)).vocabulary
    world = build_text_world_split(options, split, int(job.params.n_documents), vocabulary=vocabulary, progress=True)
    with io.atomic_directory(job.output[0]) as staging:
        save_text_world(world, staging)
    print(json.dumps({"split": split, "documents": world.n_documents, "tokens": world.n_tokens,
                      "vocabulary": len(world.vocabulary)}))


def digits_world(job: StepIO) -> None:
    """Write split ``{split}`` of scikit-learn's bundled digits (``digits:`` params) to a directory, whole."""
    from neuroneval.worlds import save_vision_world
    from neuroneval.worlds.digits import build_digits_world

    knobs = job.params.digits
    world = build_digits_world(job.wildcards.split, seed=knobs["seed"], probe_fraction=knobs["probe_fraction"],
                               hierarchy=knobs["hierarchy"])
    print(json.dumps({key: world.params[key] for key in ("source", "source_sha256", "split", "n_images")}))
    with io.atomic_directory(job.output[0]) as staging:
        save_vision_world(world, staging)


def pseudo_auc_by_kind(per_concept: dict[str, float]) -> str:
    """Mean pseudo-label AUC per concept kind (the part before ``:``), weakest first: ``"shape 0.662; ..."``."""
    kinds = pd.Series(per_concept, dtype=float).groupby(lambda name: name.split(":", 1)[0]).mean().sort_values()
    return "; ".join(f"{kind} {value:.3f}" for kind, value in kinds.items())


def worlds_report(job: StepIO) -> None:
    """One row per setting: inputs, units, concepts, positive-rate range, its model's quality next to a baseline,
    and — for pseudo-label settings — the pseudo-labels' mean and median per-concept ROC AUC against the labels of
    the same concepts, the mean AUC of every concept kind of the pseudo-label table (``pseudo_label_auc_by_kind``,
    weakest first: which attributes the contrastive model tells apart), and the share of (input, concept) entries
    at or above the concept threshold under the pseudo-labels and the labels, over the setting's concept kinds
    (``pseudo_label_positive_rate``, ``label_positive_rate``: what the binarising metrics see).

    Model quality: classifiers' held-out accuracy vs the majority class; probes' held-out concept accuracy vs
    each concept's majority value; language models' probe perplexity vs the unigram perplexity (lower is better).
    """
    from neuroneval.settings import select_concepts

    cards = {Path(path).stem: json.loads(Path(path).read_text()) for path in job.input.cards}
    for directory in job.input.language_models:
        report = json.loads((Path(directory) / "training_report.json").read_text())
        cards[Path(directory).name] = {"quality_measure": "perplexity", "quality": report["probe_perplexity"],
                                       "baseline": report["unigram_perplexity"]}
    pseudo = {}
    for path in job.input.pseudo:
        summary = json.loads(Path(path).read_text())
        pseudo[(Path(path).parent.name, summary["source"])] = summary
    rows = []
    for path in job.input.summaries:
        summary = json.loads(Path(path).read_text())
        setting = job.params.settings[summary["setting"]]
        models = [unit["model"] for unit in setting["units"]]
        card = cards.get(models[0], {})
        measure = card.get("quality_measure", "accuracy" if "holdout_accuracy" in card else "")
        quality = card.get("quality", card.get("holdout_accuracy", np.nan))
        baseline = card.get("baseline", card.get("chance_accuracy", np.nan))
        auc = median_auc = pseudo_rate = label_rate = np.nan
        by_kind = ""
        source = setting["concepts"]["source"]
        if (setting["dataset"], source) in pseudo:
            per_concept = pseudo[(setting["dataset"], source)]["auc"]
            names = select_concepts(list(per_concept), setting["concepts"].get("prefixes", []))
            auc = float(np.mean([per_concept[name] for name in names]))
            median_auc = float(np.median([per_concept[name] for name in names]))
            by_kind = pseudo_auc_by_kind(per_concept)
            rates = pseudo[(setting["dataset"], source)].get("positive_rate_by_kind", {})
            kinds = {name.split(":", 1)[0] for name in names} & set(rates)
            if kinds:
                pseudo_rate = float(np.mean([rates[kind]["pseudo"] for kind in sorted(kinds)]))
                label_rate = float(np.mean([rates[kind]["labels"] for kind in sorted(kinds)]))
        # the description comes from params, not from the truth summary: relabelling a setting reruns this report
        # only (columns stay in the summary's sorted key order)
        description = job.params.descriptions.get(summary["setting"], "")
        described = dict(sorted({**summary, "description": description}.items()))
        rows.append({**described, "model_quality_measure": measure, "model_quality": quality,
                     "model_baseline": baseline, "pseudo_label_auc": auc, "pseudo_label_median_auc": median_auc,
                     "pseudo_label_auc_by_kind": by_kind, "pseudo_label_positive_rate": pseudo_rate,
                     "label_positive_rate": label_rate})
    io.write_csv(job.output[0], pd.DataFrame(rows))

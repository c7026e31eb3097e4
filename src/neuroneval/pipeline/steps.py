"""The workflow's steps, one function per Snakemake rule (same name), each taking a :class:`StepIO`.

Steps only move data between files and library calls; the science lives in the modules they call.
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
    from neuroneval.worlds import build_vision_world, save_vision_world

    knobs = dict(job.params.world)
    knobs.pop("splits")
    seed = knobs.pop("seed")
    world = build_vision_world(int(job.params.n_images), seed=seed, split=job.wildcards.split, **knobs)
    with io.atomic_directory(job.output[0]) as staging:
        save_vision_world(world, staging)


def train_vision_classifier(job: StepIO) -> None:
    """Train one of the world's image classifiers (``models.<name>`` in params); write checkpoint and card."""
    from neuroneval.models.classifier import save_checkpoint, train_classifier
    from neuroneval.settings import select_concepts
    from neuroneval.worlds import load_vision_world

    world = load_vision_world(Path(job.input.world))
    spec = job.params.spec
    config = {"n_classes": len(world.class_names), **spec["config"]}
    concept_names, concept_targets = [], None
    if spec["architecture"] == "tiny_cbm":
        prefixes = config.pop("concept_prefixes")
        concept_names = select_concepts([c for c in world.labels.columns if c != io.ID_COLUMN], prefixes)
        concept_targets = world.labels[concept_names].to_numpy(dtype=np.float32)
        config["n_concepts"] = len(concept_names)
    training = spec["training"]
    model, report = train_classifier(
        spec["architecture"],
        config,
        world.images,
        world.class_index,
        epochs=training["epochs"],
        batch_size=training["batch_size"],
        learning_rate=training["learning_rate"],
        weight_decay=training["weight_decay"],
        holdout_fraction=training["holdout_fraction"],
        seed=training["seed"],
        concept_targets=concept_targets,
        concept_weight=training.get("concept_weight", 1.0),
    )
    print(json.dumps(report, indent=2))
    report = {**report, "concept_names": concept_names} if concept_names else report
    save_checkpoint(model, job.output.checkpoint, architecture=spec["architecture"], config=config, report=report,
                    class_names=world.class_names)


def vision_classifier_activations(job: StepIO) -> None:
    """Activation table of one layer of a world classifier (``{model}``) on a world split.

    ``softmax``/``logits``: one unit per class, known concept = its class. ``concepts`` (CBMs): one sigmoid unit per
    bottleneck concept, known concept = that concept. ``superclass``: one unit per parent
    concept, the sum of its member classes' probabilities (000 App. F), known concept = the parent. Any other
    layer name is a module of the model (``block3``, ``blocks.2``), pooled over space or tokens, no known concepts.
    """
    from neuroneval.activations import activation_frame, record_activations, superclass_units
    from neuroneval.models.classifier import load_checkpoint
    from neuroneval.models.cnn import images_to_tensor
    from neuroneval.worlds import load_vision_world

    model, card = load_checkpoint(job.input.checkpoint)
    world = load_vision_world(Path(job.input.world))
    layer = job.wildcards.layer
    extraction = job.params.extraction
    batch_size = int(extraction["batch_size"])
    batches = [images_to_tensor(world.images[start : start + batch_size])
               for start in range(0, len(world.images), batch_size)]
    recorded_layer = {"superclass": "softmax", "concepts": "concept_probabilities"}.get(layer, layer)
    values = record_activations(model, batches, [recorded_layer], pooling=extraction["pooling"])[recorded_layer]
    class_names = card["class_names"]
    if layer in ("softmax", "logits"):
        unit_names = [str(k) for k in range(values.shape[1])]
        unit_concepts = {str(k): [name] for k, name in enumerate(class_names)}
    elif layer == "concepts":
        unit_names = list(card["concept_names"])
        unit_concepts = {name: [name] for name in unit_names}
    elif layer == "superclass":
        values, unit_names = superclass_units(values, class_names, world.hierarchy)
        unit_concepts = {name: [name] for name in unit_names}
    else:
        unit_names = [str(k) for k in range(values.shape[1])]
        unit_concepts = {}
    input_ids = world.labels[io.ID_COLUMN].to_numpy()
    frame = activation_frame(values, unit_names, input_ids)
    metadata = {
        "model": job.wildcards.model,
        "layer": layer,
        "dataset": _dataset(job),
        "pooling": "none" if layer in ("softmax", "logits", "superclass", "concepts") else extraction["pooling"],
        "dtype": "float32",
        "unit_concepts": unit_concepts,
    }
    io.write_activation_table(job.output[0], frame, metadata=metadata)


def vision_label_concepts(job: StepIO) -> None:
    """The world's ground-truth labels as a concept table (``source = labels``, with the hierarchy)."""
    from neuroneval.worlds import load_vision_world

    world = load_vision_world(Path(job.input.world))
    concept_names = [column for column in world.labels.columns if column != io.ID_COLUMN]
    metadata = {"source": "labels", "dataset": _dataset(job), "concepts": concept_names,
                "hierarchy": world.hierarchy}
    io.write_concept_table(job.output[0], world.labels, metadata=metadata)


def _dataset(job: StepIO) -> str:
    """The dataset name of a world split's tables: ``params.dataset`` where the rule sets it (``digits_probe``),
    else ``vision_<split>``."""
    return getattr(job.params, "dataset", None) or f"vision_{job.wildcards.split}"


def setting_truth(job: StepIO) -> None:
    """Ground truth ``unit,concept`` of a setting, and a JSON summary of its size and concept balance."""
    from neuroneval.concepts.threshold import concept_positive
    from neuroneval.settings import load_setting, setting_truth_pairs, truth_frame, truth_method

    setting = job.params.setting
    data = load_setting(
        [Path(path) for path in job.input.activations],
        Path(job.input.concepts),
        concept_prefixes=setting["concepts"].get("prefixes", []),
    )
    known = setting_truth_pairs(setting, data)
    truth = truth_frame(known)
    io.write_csv(job.output.truth, truth)
    positive_rates = concept_positive(data.concepts).mean(axis=0)
    summary = {
        "setting": job.wildcards.setting,
        "inputs": int(data.activations.shape[0]),
        "units": len(data.unit_names),
        "known_units": len(known),
        "truth_method": truth_method(setting)["method"],
        "concepts": len(data.concept_names),
        "concept_source": setting["concepts"]["source"],
        "model": "+".join(sorted({unit["model"] for unit in setting["units"]})),
        "positive_rate_min": float(positive_rates.min()),
        "positive_rate_median": float(np.median(positive_rates)),
        "positive_rate_max": float(positive_rates.max()),
    }
    io.write_json(job.output.summary, summary)


def meta_setting(job: StepIO) -> None:
    """Meta-AUPRC of every metric on one setting: α/λ chosen on validation units, reported on test units."""
    from neuroneval.meta import MetaOptions, evaluate_setting
    from neuroneval.settings import load_setting

    data = load_setting([Path(path) for path in job.input.activations], Path(job.input.concepts),
                        concept_prefixes=job.params.setting["concepts"].get("prefixes", []))
    truth = pd.read_csv(job.input.truth, dtype=str)
    rows = evaluate_setting(data, truth, MetaOptions.from_params(job.params.meta), setting=job.wildcards.setting)
    io.write_csv(job.output[0], rows)


def ceiling_setting(job: StepIO) -> None:
    """Meta-AUPRC of the world's ideal units of one setting (``results/ceiling/<setting>.csv``).

    With ``input.ideal`` (generative-probability tables, e.g. the text world's next-token units) those are the
    units; otherwise each known unit becomes the ground-truth label of its concept (``input.labels``).
    """
    from neuroneval.meta import MetaOptions, ceiling_frame, evaluate_setting, ideal_units_from_labels
    from neuroneval.settings import load_setting

    prefixes = job.params.setting["concepts"].get("prefixes", [])
    truth = pd.read_csv(job.input.truth, dtype=str)
    ideal_files = [Path(path) for path in job.input.ideal]
    if ideal_files:
        data = load_setting(ideal_files, Path(job.input.concepts), concept_prefixes=prefixes)
        source = "generative_probability"
    else:
        activation_files = [Path(path) for path in job.input.activations]
        data = load_setting(activation_files, Path(job.input.concepts), concept_prefixes=prefixes)
        labels = load_setting(activation_files, Path(job.input.labels), concept_prefixes=[])
        data = ideal_units_from_labels(data, truth, labels.concepts, labels.concept_names)
        source = "labels"
    rows = evaluate_setting(data, truth, MetaOptions.from_params(job.params.meta), setting=job.wildcards.setting)
    io.write_csv(job.output[0], ceiling_frame(rows, ideal_source=source))


def ceiling(job: StepIO) -> None:
    """``results/ceiling.csv`` (every setting's ceiling rows, in the order of ``input.settings``) and
    ``results/ceiling.png``: floor, best model metric and ceiling per setting, read with ``results/meta.csv``."""
    from neuroneval.figures.results import plot_ceiling

    frame = pd.concat([pd.read_csv(path) for path in job.input.settings], ignore_index=True)
    io.write_csv(job.output.table, frame)
    plot_ceiling(frame, pd.read_csv(job.input.meta), list(dict.fromkeys(frame["setting"])), job.output.figure)


def table4(job: StepIO) -> None:
    """Assemble Table 4 (meta-AUPRC per metric and setting, mean AUPRC, mean rank), its tidy source and plot."""
    from neuroneval.figures.results import plot_table4
    from neuroneval.meta import build_table4

    tidy = pd.concat([pd.read_csv(path) for path in job.input], ignore_index=True)
    table = build_table4(tidy, metric_order=list(job.params.metrics), setting_order=list(job.params.settings))
    io.write_csv(job.output.tidy, tidy)
    io.write_csv(job.output.table, table, float_format="%.4f")
    summary = {row.metric: {"mean_auprc": round(float(row.mean_auprc), 6), "mean_rank": round(float(row.mean_rank), 6)}
               for row in table.itertuples()}
    io.write_json(job.output.summary, summary)
    plot_table4(table, list(job.params.settings), job.output.figure)


def pseudo_auc_by_kind(per_concept: dict[str, float]) -> str:
    """Mean pseudo-label AUC per concept kind (the part before ``:``), weakest first: ``"shape 0.662; ..."``."""
    kinds = pd.Series(per_concept, dtype=float).groupby(lambda name: name.split(":", 1)[0]).mean().sort_values()
    return "; ".join(f"{kind} {value:.3f}" for kind, value in kinds.items())


def worlds_report(job: StepIO) -> None:
    """One row per setting: inputs, units, concepts, positive-rate range, its model's quality next to a baseline,
    and — for pseudo-label settings — the pseudo-labels' mean and median per-concept ROC AUC against the labels of
    the same concepts, and the mean AUC of every concept kind of the pseudo-label table (``pseudo_label_auc_by_kind``,
    weakest first: which attributes the contrastive model tells apart).

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
        auc = median_auc = np.nan
        by_kind = ""
        source = setting["concepts"]["source"]
        if (setting["dataset"], source) in pseudo:
            per_concept = pseudo[(setting["dataset"], source)]["auc"]
            names = select_concepts(list(per_concept), setting["concepts"].get("prefixes", []))
            auc = float(np.mean([per_concept[name] for name in names]))
            median_auc = float(np.median([per_concept[name] for name in names]))
            by_kind = pseudo_auc_by_kind(per_concept)
        # the description comes from params, not from the truth summary: relabelling a setting reruns this report
        # only (columns stay in the summary's sorted key order)
        description = job.params.descriptions.get(summary["setting"], "")
        described = dict(sorted({**summary, "description": description}.items()))
        rows.append({**described, "model_quality_measure": measure, "model_quality": quality,
                     "model_baseline": baseline, "pseudo_label_auc": auc, "pseudo_label_median_auc": median_auc,
                     "pseudo_label_auc_by_kind": by_kind})
    io.write_csv(job.output[0], pd.DataFrame(rows))


def fidelity(job: StepIO) -> None:
    """The fidelity report: every testable claim of papers 000–002 beside our value (``neuroneval.fidelity``)."""
    from neuroneval.crowd.rarity import PAPER_RARITY
    from neuroneval.fidelity import FidelityInputs, fidelity_table, render_markdown

    paths = {name: Path(job.input[name]) for name in FidelityInputs.__dataclass_fields__
             if name not in ("paper_settings", "paper_rarity")}
    table = fidelity_table(FidelityInputs(**paths, paper_settings=dict(job.params.paper_settings),
                                          paper_rarity=PAPER_RARITY))
    print(table["verdict"].value_counts().to_string())
    io.write_csv(job.output.table, table)
    io.write_text(job.output.markdown, render_markdown(table))

"""Steps of the concept-evaluation benchmark (issue 16; paper 004): concepts as virtual neurons on a hidden layer
of the embedded LMs, their faithfulness and readability, and the measurement-theory meta-evaluation of those
measures (docs/concepteval.md §Workflow).

One function per Snakemake rule (same name), each taking a :class:`~neuroneval.pipeline.runner.StepIO`:

- ``concepteval_hidden``: the text split cut into windows of the LM's context length, dealt out after a seeded
  shuffle to the fitting windows and the two independent runs (``test``, ``retest``: disjoint windows drawn with
  each run's seed); the hidden states of the fitting windows and the planted labels of every window's tokens;
- ``concepteval_sae``: a sparse autoencoder trained on the fitting hidden states;
- ``concepteval_concepts``: the concept families (:data:`FAMILIES`) as linear/ReLU virtual neurons;
- ``concepteval_measures``: per LM and run, the 7 faithfulness and 9 readability measures of every concept on the
  run's windows and on each of its J subsets, the concepts' patterns and their alignment with the planted truth;
- ``concepteval_tables``: every table and figure of ``results/concepteval/``.

The science lives in :mod:`neuroneval.concepteval`; the pure helpers below (dealing windows, planted labels,
families, per-measure statistics that skip undefined values) are what this glue adds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from neuroneval import io
from neuroneval.pipeline.runner import StepIO

#: The two independent runs of every measure (test-retest reliability correlates them over concepts).
RUNS = ("test", "retest")
#: Concept families (paper 004 Table 1 and the baselines), in table order; a concept's family is its name's prefix.
FAMILIES = ("neuron", "sae", "probe", "pca", "kmeans", "random")
#: Planted concepts of the text world that probes are fitted to: the word class of the token, its sentence's topic.
PLANTED = ("slot", "topic")
#: Criteria of concurrent validity (Table 4): the planted indicator (probe directions vs random directions), the
#: best AUC of a concept's activation for any planted concept, and the mean rating of the simulated raters.
CRITERIA = ("planted", "alignment", "raters")
READABILITY_SIDES = ("IN", "OUT")
SUBSET_ALL = "all"


def readability_measures() -> list[str]:
    """IN-/OUT- × UCI, UMass, EmbDist, EmbCos (the names :func:`neuroneval.concepteval.readability` gives), then the
    simulation-based ``SIM-Corr`` (:func:`neuroneval.concepteval.simulation_readability`)."""
    from neuroneval.concepteval.readability import SIMILARITIES
    from neuroneval.concepteval.simulation import SIMULATION_MEASURE

    return [*(f"{side}-{name}" for side in READABILITY_SIDES for name in SIMILARITIES), SIMULATION_MEASURE]


def family_of(concept: str) -> str:
    """``"probe:slot:NOUN"`` → ``"probe"``."""
    return concept.partition(":")[0]


# ---------------------------------------------------------------- windows and planted truth

def cut_windows(n_tokens: int, length: int) -> np.ndarray:
    """Start offsets of the consecutive windows of ``length`` tokens in a stream of ``n_tokens`` (rest dropped)."""
    if length < 2:
        raise ValueError(f"window length must be >= 2, got {length}")
    return np.arange(n_tokens // length, dtype=np.int64) * length


def deal_windows(n_windows: int, *, fit: int, run: int, seed: int, run_seeds: Sequence[int]) -> dict[str, np.ndarray]:
    """Window indices of the fitting part and of each run (:data:`RUNS`): the first ``fit`` of a seeded shuffle
    fit the families; each run then draws ``run`` windows with its own seed from those left, the retest from
    those the test left, so the parts are disjoint. Indices come back sorted."""
    if len(run_seeds) != len(RUNS):
        raise ValueError(f"concepteval.runs: need exactly {len(RUNS)} seeds (test, retest), got {list(run_seeds)}")
    needed = fit + len(RUNS) * run
    if needed > n_windows:
        raise ValueError(f"concepteval.windows: fit + 2·run = {needed} windows, the split has {n_windows}")
    order = np.random.default_rng(seed).permutation(n_windows)
    parts = {"fit": np.sort(order[:fit])}
    pool = order[fit:]
    for name, run_seed in zip(RUNS, run_seeds, strict=True):
        chosen = np.random.default_rng(run_seed).choice(pool.size, size=run, replace=False)
        parts[name] = np.sort(pool[chosen])
        pool = np.delete(pool, chosen)
    return parts


def planted_labels(slot_of_token: np.ndarray, topic_of_token: np.ndarray, n_topics: int,
                   planted: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """0/1 labels (n, T) of the planted concepts of tokens and their names (``slot:NOUN``, ``topic:2``)."""
    from neuroneval.worlds.text_grammar import SLOT_INDEX

    columns, names = [], []
    for kind in planted:
        if kind == "slot":
            for name, code in sorted(SLOT_INDEX.items(), key=lambda item: item[1]):
                columns.append(np.asarray(slot_of_token) == code)
                names.append(f"slot:{name}")
        elif kind == "topic":
            for topic in range(n_topics):
                columns.append(np.asarray(topic_of_token) == topic)
                names.append(f"topic:{topic}")
        else:
            raise ValueError(f"concepteval.families.probe.planted: unknown kind {kind!r}; known: {list(PLANTED)}")
    if not columns:
        return np.zeros((len(slot_of_token), 0), dtype=np.int8), names
    return np.stack(columns, axis=1).astype(np.int8), names


def alignment_auc(activations: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """AUC of every concept's activation (n, C) for every planted label (n, T) 0/1: (C, T), ties averaged; NaN
    for a label without positives or negatives."""
    from scipy.stats import rankdata

    ranks = rankdata(np.asarray(activations, dtype=np.float64), axis=0)
    positives = np.asarray(labels, dtype=np.float64)
    n1 = positives.sum(axis=0)
    n0 = positives.shape[0] - n1
    with np.errstate(divide="ignore", invalid="ignore"):
        auc = (ranks.T @ positives - n1 * (n1 + 1) / 2) / (n1 * n0)
    return np.where((n1 > 0) & (n0 > 0), auc, np.nan)


def planted_alignment(names: Sequence[str], auc: np.ndarray, label_names: Sequence[str]) -> pd.DataFrame:
    """Each concept's best planted AUC (C, T) and which label gives it: ``concept, family, alignment,
    best_planted`` (NaN and empty without planted labels, T = 0)."""
    if auc.shape[1] == 0:
        return pd.DataFrame({"concept": list(names), "family": [family_of(name) for name in names],
                             "alignment": np.nan, "best_planted": ""})
    best = np.nanargmax(np.where(np.isfinite(auc), auc, -np.inf), axis=1)
    return pd.DataFrame({"concept": list(names), "family": [family_of(name) for name in names],
                         "alignment": auc[np.arange(len(names)), best], "best_planted": np.asarray(label_names)[best]})


# ---------------------------------------------------------------- concept families

def build_families(hidden: np.ndarray, labels: np.ndarray, label_names: Sequence[str], families: Mapping[str, Any],
                   sae: Any | None = None) -> tuple[list[Any], pd.DataFrame]:
    """The concept families of ``families`` (``concepteval.families``) on fitting hidden states (n, m).

    Neurons and SAE features are ``count`` sampled with ``seed`` (SAE: among features that fire on the fitting
    states); probes are fitted to the planted labels; PCA and k-means give ``count`` directions; the floor is
    ``count`` random unit directions, centred at the mean state when ``centered``; a family absent or set to
    ``None`` is left out. Returns the concepts and a card
    ``concept, family, kind, positives, holdout_balanced_accuracy``.
    """
    from neuroneval.concepteval import (
        ProbeOptions,
        fit_probes,
        kmeans_concepts,
        neuron_concepts,
        pca_concepts,
        random_concepts,
        sae_concepts,
    )

    unknown = sorted(set(families) - set(FAMILIES))
    if unknown:
        raise ValueError(f"concepteval.families: unknown families {unknown}; known: {list(FAMILIES)}")
    width = hidden.shape[1]
    concepts: list[Any] = []
    probe_card = pd.DataFrame(columns=["concept", "positives", "holdout_balanced_accuracy"])
    for family in [family for family in FAMILIES if families.get(family) is not None]:
        spec = dict(families[family] or {})
        if family == "neuron":
            units = _sample(width, spec["count"], spec["seed"], "neuron")
            concepts += neuron_concepts(width, units.tolist())
        elif family == "sae":
            if sae is None:
                raise ValueError("concepteval.families.sae: no trained sparse autoencoder given")
            alive = np.flatnonzero((sae.encode(hidden) > 0).any(axis=0))
            chosen = alive[_sample(alive.size, spec["count"], spec["seed"], "sae (alive features)")]
            concepts += sae_concepts(sae, features=chosen)
        elif family == "probe":
            options = ProbeOptions.from_params({key: value for key, value in spec.items() if key != "planted"})
            probes, probe_card = fit_probes(hidden, labels, list(label_names), options)
            concepts += probes
        elif family == "pca":
            concepts += pca_concepts(hidden, min(spec["count"], min(hidden.shape)))
        elif family == "kmeans":
            concepts += kmeans_concepts(hidden, spec["count"], seed=spec["seed"])
        elif family == "random":
            center = hidden.mean(axis=0) if spec.get("centered", True) else None
            concepts += random_concepts(width, spec["count"], seed=spec["seed"], center=center)
    card = pd.DataFrame({"concept": [concept.name for concept in concepts],
                         "family": [family_of(concept.name) for concept in concepts],
                         "kind": [concept_kind(concept) for concept in concepts]})
    card = card.merge(probe_card, on="concept", how="left")
    return concepts, card


def _sample(n: int, count: int, seed: int, what: str) -> np.ndarray:
    """``count`` of ``range(n)`` drawn with ``seed`` (all when ``count`` >= n), sorted."""
    if n == 0:
        raise ValueError(f"concepteval.families: no {what} to sample from")
    if count >= n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=count, replace=False))


def concept_kind(concept: Any) -> str:
    """``linear`` (a = vᵀh + b) or ``relu`` (a = ReLU(vᵀh + b)); other concepts are not stored."""
    from neuroneval.concepteval import LinearConcept, ReluConcept

    if isinstance(concept, LinearConcept):
        return "linear"
    if isinstance(concept, ReluConcept):
        return "relu"
    raise ValueError(f"concept {concept.name!r}: only linear and ReLU concepts can be stored")


def save_concepts(path: str | Path, concepts: Sequence[Any]) -> None:
    """Names, kinds, directions (C, m) and biases (C,) of linear/ReLU concepts in one ``.npz``."""
    arrays = {"names": np.array([concept.name for concept in concepts]),
              "kinds": np.array([concept_kind(concept) for concept in concepts]),
              "directions": np.stack([concept.direction for concept in concepts]),
              "biases": np.array([concept.bias for concept in concepts])}
    _save_npz(path, arrays)


def load_concepts(path: str | Path) -> list[Any]:
    """The concepts :func:`save_concepts` wrote, in order."""
    from neuroneval.concepteval import LinearConcept, ReluConcept

    with np.load(path) as data:
        classes = {"linear": LinearConcept, "relu": ReluConcept}
        return [classes[str(kind)](direction, float(bias), str(name))
                for name, kind, direction, bias in zip(data["names"], data["kinds"], data["directions"],
                                                       data["biases"], strict=True)]


def _save_npz(path: str | Path, arrays: Mapping[str, np.ndarray]) -> None:
    with io.atomic_path(path) as tmp_path, open(tmp_path, "wb") as handle:
        np.savez_compressed(handle, **arrays)


# ---------------------------------------------------------------- measures of one run

def subset_windows(n_windows: int, subsets: int) -> list[np.ndarray]:
    """J consecutive, near-equal parts of a run's windows (Cronbach's α, Eq. 14)."""
    if not 2 <= subsets <= n_windows:
        raise ValueError(f"concepteval.windows.subsets must lie in [2, {n_windows}] (the run's windows), got {subsets}")
    return np.array_split(np.arange(n_windows), subsets)


def readability_scores(model: Any, windows: np.ndarray, concepts: Sequence[Any], *, layer: int, site: str,
                       corpus: Any, pattern_options: Any, readability_options: Any, simulation_options: Any,
                       vocabulary: Sequence[str], chat: Any = None) -> tuple[pd.DataFrame, dict]:
    """Readability (IN/OUT × UCI, UMass, EmbDist, EmbCos, and SIM-Corr) of ``concepts`` on token windows, and the
    patterns ``{"IN": (C, k), "OUT": (C, k)}`` it scored (input side by context ablation, output side by the head).

    SIM-Corr explains on the even-numbered windows and simulates on the odd-numbered ones (held out); ``chat`` is
    the chat backend when ``simulation_options.backend`` is ``llm``."""
    from neuroneval.concepteval import (
        concept_activation_function,
        input_patterns,
        output_patterns,
        readability,
        simulation_readability,
        split_lm,
    )

    vocab_size = int(model.config.vocab_size)
    activations = concept_activation_function(model, concepts, layer=layer, site=site)
    patterns = {"IN": input_patterns(windows, activations, vocab_size, pattern_options)[0]}
    split = split_lm(model, windows, layer=layer, site=site)
    patterns["OUT"] = output_patterns(concepts, split.hidden, split.head, pattern_options)[0]
    embeddings = model.get_input_embeddings().weight.detach().double().numpy()
    table = readability([concept.name for concept in concepts], input_patterns=patterns["IN"],
                        output_patterns=patterns["OUT"], corpus=corpus, embeddings=embeddings,
                        options=readability_options)
    if len(windows) < 2:
        raise ValueError(f"SIM-Corr explains on half of the windows and scores on the other half: {len(windows)} "
                         "window(s) is too few (concepteval.windows.run / subsets)")
    values = activations(windows)
    simulated = simulation_readability(windows[0::2], values[0::2], windows[1::2], values[1::2],
                                       [concept.name for concept in concepts], simulation_options,
                                       vocabulary=vocabulary, backend=chat)
    return pd.concat([table, simulated[["concept", "measure", "value"]]], ignore_index=True), patterns


def run_measures(model: Any, windows: np.ndarray, concepts: Sequence[Any], *, layer: int, site: str, subsets: int,
                 corpus: Any, faithfulness_options: Any, pattern_options: Any, readability_options: Any,
                 simulation_options: Any, vocabulary: Sequence[str], chat: Any = None) -> tuple[pd.DataFrame, dict]:
    """Every measure of every concept on a run's windows (``subset`` = ``all``) and on each of its J subsets
    (``subset`` = 0 … J − 1): a long table ``subset, concept, measure, value``, and the patterns of the whole run.

    Faithfulness perturbs all positions once and averages the per-position differences per subset (Eq. 1);
    readability finds the patterns of each subset anew."""
    from neuroneval.concepteval import activate_all, position_differences, split_lm
    from neuroneval.concepteval.faithfulness import aggregate

    names = [concept.name for concept in concepts]
    split = split_lm(model, windows, layer=layer, site=site)
    differences = position_differences(split.hidden, split.head, split.targets, concepts, faithfulness_options)
    weighting = faithfulness_options.weighting
    activations = activate_all(split.hidden, concepts).numpy() if weighting == "activation" else None
    parts = [(SUBSET_ALL, np.arange(len(windows)))]
    parts += [(str(index), rows) for index, rows in enumerate(subset_windows(len(windows), subsets))]
    frames, run_patterns = [], {}
    for subset, rows in parts:
        values = aggregate(differences[:, :, rows], None if activations is None else activations[rows],
                           weighting=weighting)
        frames.append(pd.DataFrame({"subset": subset, "concept": np.repeat(names, values.shape[1]),
                                    "measure": np.tile(faithfulness_options.measures, len(names)),
                                    "value": values.ravel()}))
        table, patterns = readability_scores(model, windows[rows], concepts, layer=layer, site=site, corpus=corpus,
                                             pattern_options=pattern_options,
                                             readability_options=readability_options,
                                             simulation_options=simulation_options, vocabulary=vocabulary, chat=chat)
        frames.append(table[["concept", "measure", "value"]].assign(subset=subset))
        if subset == SUBSET_ALL:
            run_patterns = patterns
    return pd.concat(frames, ignore_index=True)[["subset", "concept", "measure", "value"]], run_patterns


def chat_backend(options: Any) -> Any:
    """The OpenAI-compatible chat client of ``concepteval.simulation.llm`` when the backend is ``llm``, else None."""
    if options.backend != "llm":
        return None
    from neuroneval.explain.llm_backend import OpenAICompatibleChat

    return OpenAICompatibleChat(options.llm)


def pattern_table(patterns: Mapping[str, np.ndarray], names: Sequence[str], vocabulary: Sequence[str]) -> pd.DataFrame:
    """Patterns as rows ``concept, side, rank, token_id, token`` (missing slots, −1, left out)."""
    rows = []
    for side, tokens in patterns.items():
        for concept, row in zip(names, np.asarray(tokens), strict=True):
            rows += [{"concept": concept, "side": side, "rank": rank, "token_id": int(token),
                      "token": vocabulary[int(token)]} for rank, token in enumerate(row) if token >= 0]
    return pd.DataFrame(rows, columns=["concept", "side", "rank", "token_id", "token"])


# ---------------------------------------------------------------- meta-evaluation tables

def score_matrix(measures: pd.DataFrame, run: str, concepts: Sequence[str], names: Sequence[str],
                 subset: str = SUBSET_ALL) -> np.ndarray:
    """(C, M) values of one run (and subset) for ``concepts`` × measures ``names`` (NaN where missing)."""
    part = measures[(measures["run"] == run) & (measures["subset"].astype(str) == subset)]
    wide = part.pivot_table(index="concept", columns="measure", values="value", aggfunc="first", dropna=False)
    return wide.reindex(index=list(concepts), columns=list(names)).to_numpy(dtype=np.float64)


def constant(values: np.ndarray) -> bool:
    """Whether finite ``values`` are equal up to rounding (spread ≤ 1e-9 of their magnitude): a measure that does
    not vary over concepts has no correlation or α, whatever its rounding noise gives."""
    finite = np.asarray(values, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    return finite.size == 0 or np.ptp(finite) <= 1e-9 * max(float(np.abs(finite).max()), 1e-300)


def _statistic_row(function: Any, arrays: Sequence[np.ndarray], measure: str, **kwargs: Any) -> pd.DataFrame:
    """``function`` on the concepts where every array is finite; a NaN row with fewer than 3 of them or when an
    array is :func:`constant` over them."""
    keep = np.all([np.isfinite(array).reshape(-1, array.shape[-1]).all(axis=0) if array.ndim > 1
                   else np.isfinite(array) for array in arrays], axis=0)
    kept = [array[..., keep] if array.ndim > 1 else array[keep] for array in arrays]
    if keep.sum() < 3 or any(constant(array) for array in kept):
        return pd.DataFrame({"measure": [measure], "value": [np.nan], "n_concepts": [int(keep.sum())]})
    return function(*kept, **kwargs)


def reliability_table(measures: pd.DataFrame, concepts: Sequence[str], names: Sequence[str], subsets: int,
                      bootstrap: Any) -> pd.DataFrame:
    """Per measure: test-retest Pearson r over concepts (Eq. 13) and Cronbach's α over the J subsets of each run
    (Eq. 14), with bootstrap intervals over concepts; ``acceptable`` = value ≥ 0.9 (Nunnally and Bernstein)."""
    from neuroneval.concepteval import retest_reliability, subset_consistency

    test, retest = (score_matrix(measures, run, concepts, names) for run in RUNS)
    frames = []
    for column, measure in enumerate(names):
        row = _statistic_row(lambda a, b, m=measure: retest_reliability(a, b, [m], bootstrap),
                             [test[:, column], retest[:, column]], measure)
        frames.append(row.assign(statistic="pearson", run="test-retest"))
        for run in RUNS:
            stacked = np.stack([score_matrix(measures, run, concepts, [measure], str(j))[:, 0]
                                for j in range(subsets)])
            row = _statistic_row(lambda scores, m=measure: subset_consistency(scores, [m], bootstrap), [stacked],
                                 measure)
            frames.append(row.assign(statistic="cronbach_alpha", run=run))
    table = pd.concat(frames, ignore_index=True)
    table["acceptable"] = table["value"] >= 0.9
    return table.reindex(columns=["measure", "statistic", "run", "value", "ci_low", "ci_high", "acceptable",
                                  "n_concepts", "n_boot", "seed"])


def criteria(concepts: Sequence[str], truth: pd.DataFrame,
             raters: Any) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    """The validity criteria (:data:`CRITERIA`) per concept and the simulated ratings (R, C) of the test run:
    ``planted`` 1/0 for probe/random directions (NaN for other families), ``alignment`` the best planted AUC,
    ``raters`` the mean rating of raters who see the alignment through noise (``RaterOptions``). Without any
    planted alignment (a user's corpus) there is nothing to rate: ``raters`` is NaN and the ratings ``None``."""
    from neuroneval.concepteval import simulate_raters

    alignment = truth.set_index("concept").loc[list(concepts), "alignment"].to_numpy(dtype=np.float64)
    families = np.array([family_of(name) for name in concepts])
    planted = np.where(families == "probe", 1.0, np.where(families == "random", 0.0, np.nan))
    if not np.isfinite(alignment).any():
        return {"planted": planted, "alignment": alignment, "raters": np.full(len(concepts), np.nan)}, None
    ratings = simulate_raters(np.nan_to_num(alignment, nan=0.5), raters)
    return {"planted": planted, "alignment": alignment, "raters": ratings.mean(axis=0)}, ratings


def validity_table(scores: np.ndarray, names: Sequence[str], criterion_values: Mapping[str, np.ndarray],
                   options: Any) -> pd.DataFrame:
    """Concurrent validity (Table 4): Kendall τ, Pearson r, Spearman ρ of each measure with each criterion."""
    from neuroneval.concepteval import concurrent_validity

    frames = []
    for criterion, values in criterion_values.items():
        for column, measure in enumerate(names):
            row = _statistic_row(lambda x, y, m=measure: concurrent_validity(x, y, [m], options),
                                 [scores[:, column], values], measure)
            frames.append(row.assign(criterion=criterion))
    table = pd.concat(frames, ignore_index=True)
    return table.reindex(columns=["criterion", "measure", "statistic", "value", "ci_low", "ci_high", "n_concepts",
                                  "n_boot", "seed"])


def mtmm_table(scores: np.ndarray, names: Sequence[str], alpha: Mapping[str, float], options: Any) -> pd.DataFrame:
    """The MTMM table (Fig. 3): Kendall τ between measures over the concepts defined on all of them, α (test run)
    on the diagonal. Measures undefined for more than half of the concepts are left out."""
    from neuroneval.concepteval.measurement import mtmm

    defined = np.isfinite(scores)
    keep_measures = defined.mean(axis=0) > 0.5
    matrix = scores[:, keep_measures]
    matrix = matrix[np.isfinite(matrix).all(axis=1)]
    kept = [name for name, keep in zip(names, keep_measures, strict=True) if keep]
    if len(matrix) < 3:
        raise ValueError(f"MTMM: only {len(matrix)} concepts have every measure; need 3")
    consistency = np.array([alpha.get(name, np.nan) for name in kept])
    return mtmm(matrix, kept, consistency=consistency, options=options)


def method_table(scores: np.ndarray, concepts: Sequence[str], names: Sequence[str], bootstrap: Any) -> pd.DataFrame:
    """Method comparison (Fig. 4): per family and measure the mean over its concepts with a bootstrap interval; the
    probes also per planted kind (``probe:slot``, ``probe:topic``), as the world may encode one kind and not the
    other."""
    from neuroneval.concepteval import mean_with_interval

    groups = {family: np.array([family_of(name) == family for name in concepts]) for family in FAMILIES}
    kinds = dict.fromkeys(name.split(":")[1] for name in concepts if family_of(name) == "probe")
    groups.update({f"probe:{kind}": np.array([name.startswith(f"probe:{kind}:") for name in concepts])
                   for kind in kinds if len(kinds) > 1})
    order = [*FAMILIES[: FAMILIES.index("probe") + 1], *(f"probe:{kind}" for kind in kinds if len(kinds) > 1),
             *FAMILIES[FAMILIES.index("probe") + 1 :]]
    rows = []
    for family in [group for group in order if groups[group].any()]:
        for column, measure in enumerate(names):
            values = scores[groups[family], column]
            values = values[np.isfinite(values)]
            summary = (mean_with_interval(values, bootstrap) if values.size else
                       {"value": np.nan, "ci_low": np.nan, "ci_high": np.nan, "n_boot": bootstrap.n_boot,
                        "seed": bootstrap.seed})
            rows.append({"family": family, "measure": measure, "mean": summary["value"],
                         "ci_low": summary["ci_low"], "ci_high": summary["ci_high"], "n_concepts": int(values.size),
                         "n_boot": summary["n_boot"], "seed": summary["seed"]})
    return pd.DataFrame(rows)


def shown_concepts(scores: pd.DataFrame, per_family: int) -> list[str]:
    """Table 5's concepts: every probe, and per other family the ``per_family`` best and worst by the mean rank of
    IN-EmbCos and OUT-EmbCos (as the paper picks its SAE examples)."""
    wide = scores.pivot_table(index="concept", columns="measure", values="value", aggfunc="first")
    ranks = wide.reindex(columns=["IN-EmbCos", "OUT-EmbCos"]).rank(ascending=False).mean(axis=1)
    chosen = []
    for family in FAMILIES:
        members = [name for name in scores["concept"].drop_duplicates() if family_of(name) == family]
        if family == "probe":
            chosen += members
            continue
        ordered = ranks.reindex(members).sort_values(kind="stable").index.tolist()
        picked = ordered[:per_family] + ordered[-per_family:]
        chosen += list(dict.fromkeys(picked))
    return chosen


def patterns_markdown(patterns: pd.DataFrame, scores: pd.DataFrame, per_family: int) -> str:
    """Table 5 for every LM as Markdown: the input and output patterns of the shown concepts (:func:`shown_concepts`)
    with their IN-/OUT-EmbCos."""
    lines = ["# Top patterns per concept (paper 004 Table 5)", "",
             "Input side: tokens with the largest activation or contribution to high activations (context "
             "ablation); output side: tokens the model prefers when the hidden state is the concept direction. "
             "Test run; every probe direction, and per other family the best and worst concepts by the mean rank of "
             "IN-EmbCos and OUT-EmbCos.", ""]
    for model, model_scores in scores.groupby("model", sort=False):
        model_patterns = patterns[patterns["model"] == model]
        wide = model_scores.pivot_table(index="concept", columns="measure", values="value", aggfunc="first")
        lines += [f"## {model}", "", "| family | concept | input pattern | output pattern | IN-EmbCos | OUT-EmbCos |",
                  "|---|---|---|---|---|---|"]
        for concept in shown_concepts(model_scores, per_family):
            cells = []
            for side in READABILITY_SIDES:
                tokens = model_patterns[(model_patterns["concept"] == concept) & (model_patterns["side"] == side)]
                tokens = tokens.sort_values("rank")["token"].astype(str)
                cells.append(", ".join(_markdown_cell(token) for token in tokens) or "–")
            values = [wide.at[concept, name] if name in wide.columns else np.nan
                      for name in ("IN-EmbCos", "OUT-EmbCos")]
            lines.append(f"| {family_of(concept)} | `{concept}` | {cells[0]} | {cells[1]} | "
                         + " | ".join("–" if not np.isfinite(value) else f"{value:.3f}" for value in values) + " |")
        lines.append("")
    return "\n".join(lines)


def _markdown_cell(token: str) -> str:
    return token.replace("|", "\\|").replace("`", "'") or "·"


# ---------------------------------------------------------------- sources: the embedded world or a user's corpus

@dataclass(frozen=True)
class TokenSource:
    """What the steps read besides the windows: the LM, the token stream (and its documents), the vocabulary, the
    token that replaces ablated context tokens, the tokens no pattern may hold, the default window length, and the
    planted word class and topic of every token (``None`` for a user's corpus, which has none)."""

    model: Any
    token_ids: np.ndarray
    vocabulary: list[str]
    doc_offsets: np.ndarray | None
    replacement_id: int
    exclude_ids: tuple[int, ...]
    context_length: int
    planted: tuple[np.ndarray, np.ndarray, int] | None


def load_source(job: StepIO) -> TokenSource:
    """The embedded text world and LM (inputs ``world``, ``model``), or — when ``params.model_spec`` is set (the
    paper profile) — a transformers checkpoint loaded with ``neuroneval.models.loaders`` and the token stream of
    the rule ``external_text_dataset`` (inputs ``tokens``, ``vocabulary``)."""
    spec = job.params.model_spec
    if not spec:
        from neuroneval.models.lm import load_lm
        from neuroneval.worlds.text import EOS_ID, UNK_ID, load_text_world

        world = load_text_world(Path(job.input.world))
        model = load_lm(Path(job.input.model))
        return TokenSource(model, world.token_ids, list(world.vocabulary), world.doc_offsets, UNK_ID, (EOS_ID, UNK_ID),
                           int(model.config.n_positions),
                           (world.slot_of_token, world.topic_of_token, int(world.topic_mixture.shape[1])))
    import json

    from neuroneval.external.config import loader_spec
    from neuroneval.models.loaders import load_model

    stream = json.loads(Path(job.input.vocabulary).read_text())
    exclude = tuple(int(index) for index in stream["exclude"])
    if not exclude:
        raise ValueError("concepteval: the corpus's tokenizer has no special token to replace ablated tokens with")
    model = load_model(loader_spec(spec)).module.eval()
    if len(stream["vocabulary"]) != int(model.config.vocab_size):
        raise ValueError(f"concepteval: the corpus was cut with {stream['tokenizer_model']}'s tokenizer "
                         f"({len(stream['vocabulary'])} tokens), the model has {model.config.vocab_size}")
    return TokenSource(model, np.load(job.input.tokens), list(stream["vocabulary"]), None, exclude[0], exclude,
                       int(spec.get("context_length") or 0), None)


# ---------------------------------------------------------------- steps

def concepteval_hidden(job: StepIO) -> None:
    """``data/concepteval/<lm>/hidden.npz``: the windows of each part (fit, test, retest), the planted labels of
    their tokens (none for a user's corpus), and the hidden states of the fitting windows at the studied site."""
    from neuroneval.concepteval import site_activations

    source = load_source(job)
    length = int(job.params.window_length or source.context_length)
    if source.planted is None and job.params.planted:
        raise ValueError("concepteval.families.probe: a user's corpus has no planted concepts to fit probes to; "
                         "leave the probe family out")
    starts = cut_windows(source.token_ids.size, length)
    windows_spec = job.params.windows
    parts = deal_windows(starts.size, fit=int(windows_spec["fit"]), run=int(windows_spec["run"]),
                         seed=int(windows_spec["seed"]), run_seeds=[int(seed) for seed in job.params.runs])
    arrays: dict[str, np.ndarray] = {}
    label_names: list[str] = []
    for name, indices in parts.items():
        positions = starts[indices][:, None] + np.arange(length)
        arrays[f"{name}_windows"] = source.token_ids[positions].astype(np.int64)
        if source.planted is None:
            labels = np.zeros((positions.size, 0), dtype=np.int8)
        else:
            slots, topics, n_topics = source.planted
            labels, label_names = planted_labels(slots[positions].ravel(), topics[positions].ravel(), n_topics,
                                                 job.params.planted or ())
        arrays[f"{name}_labels"] = labels
    arrays["label_names"] = np.array(label_names, dtype=str)
    hidden = site_activations(source.model, arrays["fit_windows"], layer=int(job.params.layer), site=job.params.site)
    arrays["fit_hidden"] = hidden.float().numpy().reshape(-1, hidden.shape[-1])
    _save_npz(job.output.hidden, arrays)
    print({name: int(indices.size) for name, indices in parts.items()}, "windows of", length, "tokens; hidden",
          arrays["fit_hidden"].shape, "planted", label_names)


def concepteval_sae(job: StepIO) -> None:
    """``data/concepteval/<lm>/sae.npz`` and its card: a sparse autoencoder on the fitting hidden states."""
    from neuroneval.concepteval import SAEOptions, train_sae

    with np.load(job.input.hidden) as data:
        hidden = data["fit_hidden"].astype(np.float64)
    sae = train_sae(hidden, SAEOptions.from_params(job.params.training))
    _save_npz(job.output.sae, {"encoder": sae.encoder, "encoder_bias": sae.encoder_bias, "decoder": sae.decoder,
                               "decoder_bias": sae.decoder_bias})
    io.write_json(job.output.card, sae.report)
    print(sae.report)


def load_sae(path: str | Path) -> Any:
    """The sparse autoencoder :func:`concepteval_sae` wrote."""
    from neuroneval.concepteval import SparseAutoencoder

    with np.load(path) as data:
        return SparseAutoencoder(report={}, **{name: data[name] for name in data.files})


def concepteval_concepts(job: StepIO) -> None:
    """``data/concepteval/<lm>/concepts.npz`` and ``concepts.csv``: every concept family on the fitting states."""
    with np.load(job.input.hidden) as data:
        hidden = data["fit_hidden"].astype(np.float64)
        labels, label_names = data["fit_labels"], [str(name) for name in data["label_names"]]
    families = job.params.families
    sae = load_sae(job.input.sae) if "sae" in families else None
    concepts, card = build_families(hidden, labels, label_names, families, sae)
    save_concepts(job.output.concepts, concepts)
    io.write_csv(job.output.card, card)
    print(card.groupby("family", sort=False).size().to_dict())


def concepteval_measures(job: StepIO) -> None:
    """``results/concepteval/runs/<lm>/<run>.csv`` (every measure of every concept, on the run and its subsets),
    ``<run>_patterns.csv`` and ``<run>_truth.csv`` (each concept's best planted AUC on the run's tokens; NaN for
    a user's corpus)."""
    import torch

    from neuroneval.concepteval import (
        CooccurrenceCorpus,
        FaithfulnessOptions,
        PatternOptions,
        ReadabilityOptions,
        SimulationOptions,
        activate_all,
        site_activations,
    )

    torch.set_num_threads(max(1, int(job.threads)))
    run = job.wildcards.run
    source = load_source(job)
    model = source.model
    # GRAD takes a directional derivative through autograd.grad (a second derivative), which torch's CPU flash
    # attention kernel lacks for float32 (the default `sdpa` picks it): the plain attention has it, same values.
    model.set_attn_implementation("eager")
    concepts = load_concepts(job.input.concepts)
    with np.load(job.input.hidden) as data:
        windows, labels = data[f"{run}_windows"], data[f"{run}_labels"]
        label_names = [str(name) for name in data["label_names"]]
    readability_options = ReadabilityOptions.from_params(job.params.readability)
    corpus = CooccurrenceCorpus.from_tokens(source.token_ids, len(source.vocabulary), doc_offsets=source.doc_offsets,
                                            window=readability_options.window)
    pattern_options = PatternOptions.from_params({**job.params.patterns, "replacement_id": source.replacement_id,
                                                  "exclude_ids": source.exclude_ids})
    layer, site = int(job.params.layer), job.params.site
    simulation_options = SimulationOptions.from_params(job.params.simulation)
    scores, patterns = run_measures(model, windows, concepts, layer=layer, site=site,
                                    subsets=int(job.params.subsets), corpus=corpus,
                                    faithfulness_options=FaithfulnessOptions.from_params(job.params.faithfulness),
                                    pattern_options=pattern_options, readability_options=readability_options,
                                    simulation_options=simulation_options, vocabulary=source.vocabulary,
                                    chat=chat_backend(simulation_options))
    names = [concept.name for concept in concepts]
    scores.insert(0, "run", run)
    scores.insert(0, "model", job.wildcards.lm)
    scores.insert(3, "family", [family_of(name) for name in scores["concept"]])
    io.write_csv(job.output.measures, scores)
    io.write_csv(job.output.patterns, pattern_table(patterns, names, source.vocabulary))
    hidden = site_activations(model, windows, layer=layer, site=site).double()
    activations = activate_all(hidden, concepts).numpy().reshape(-1, len(concepts))
    truth = planted_alignment(names, alignment_auc(activations, labels), label_names)
    io.write_csv(job.output.truth, truth)
    print(scores[scores["subset"] == SUBSET_ALL].groupby(["family", "measure"])["value"].mean().unstack().round(4)
          .to_string())


def concepteval_tables(job: StepIO) -> None:
    """Every table and figure of ``results/concepteval/`` from the runs of every LM (docs/concepteval.md)."""
    from neuroneval.concepteval import BootstrapOptions, MeasurementOptions, RaterOptions, inter_rater
    from neuroneval.concepteval.measurement import mtmm_matrix
    from neuroneval.figures.concepteval import plot_method_comparison, plot_mtmm, plot_reliability

    measurement = MeasurementOptions.from_params(job.params.measurement)
    bootstrap: BootstrapOptions = measurement.bootstrap
    raters = RaterOptions.from_params(job.params.raters)
    measures = pd.concat([pd.read_csv(path, dtype={"subset": str}) for path in job.input.measures],
                         ignore_index=True)
    truths = {(Path(path).parent.name, Path(path).name.removesuffix("_truth.csv")): pd.read_csv(path)
              for path in job.input.truth}
    patterns = pd.concat([pd.read_csv(path, keep_default_na=False).assign(model=Path(path).parent.name)
                          for path in job.input.patterns if Path(path).name.startswith(f"{RUNS[0]}_")],
                         ignore_index=True)
    names = list(dict.fromkeys([*job.params.faithfulness_measures, *readability_measures()]))
    reliability, validity, rater_tables, mtmm_tables, methods, matrices = [], [], [], [], [], {}
    for model in dict.fromkeys(measures["model"]):
        part = measures[measures["model"] == model]
        concepts = list(dict.fromkeys(part["concept"]))
        table = reliability_table(part, concepts, names, int(job.params.subsets), bootstrap).assign(model=model)
        reliability.append(table)
        alpha = table[(table["statistic"] == "cronbach_alpha") & (table["run"] == RUNS[0])].set_index("measure")
        test_scores = score_matrix(part, RUNS[0], concepts, names)
        criterion_values, ratings = criteria(concepts, truths[(model, RUNS[0])], raters)
        validity.append(validity_table(test_scores, names, criterion_values, measurement).assign(model=model))
        if ratings is not None:
            rater_tables.append(inter_rater(ratings, [f"rater{i + 1}" for i in range(len(ratings))], measurement)
                                .assign(model=model, truth="alignment", noise=raters.noise,
                                        noise_scale=raters.noise_scale))
        mtmm_frame = mtmm_table(test_scores, names, alpha["value"].to_dict(), measurement).assign(model=model)
        mtmm_tables.append(mtmm_frame)
        matrices[model] = mtmm_matrix(mtmm_frame)
        comparison = list(job.params.comparison)
        methods.append(method_table(score_matrix(part, RUNS[0], concepts, comparison), concepts, comparison, bootstrap)
                       .assign(model=model))
    outputs = {"reliability": reliability, "validity": validity, "inter_rater": rater_tables, "mtmm": mtmm_tables,
               "methods": methods}
    for name, frames in outputs.items():
        frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["model"])
        io.write_csv(getattr(job.output, name), frame[["model", *[c for c in frame.columns if c != "model"]]])
    run_rows = measures[measures["subset"] == SUBSET_ALL].drop(columns="subset")
    io.write_csv(job.output.measures, run_rows)
    reliability_frame = pd.concat(reliability, ignore_index=True)
    plot_reliability(reliability_frame, job.output.reliability_figure)
    plot_mtmm(matrices, job.output.mtmm_figure)
    methods_frame = pd.concat(methods, ignore_index=True)
    plot_method_comparison(methods_frame, job.output.methods_figure)
    test_rows = run_rows[run_rows["run"] == RUNS[0]]
    io.write_text(job.output.patterns, patterns_markdown(patterns, test_rows, int(job.params.patterns_shown)))
    print(reliability_frame.pivot_table(index="measure", columns=["model", "statistic", "run"], values="value")
          .round(3).to_string())
    print(methods_frame.round(4).to_string())

"""The paper-004 benchmark on one LM (docs/concepteval.md §Workflow): windows of a token stream dealt out to the
fitting part and two runs, the planted labels of their tokens and the concepts' alignment with them, the concept
families, and every faithfulness and readability measure of a run and of its J subsets.

:func:`hidden_parts`, :func:`build_families` and :func:`measure_run` are what the rules ``concepteval_hidden``,
``concepteval_concepts`` and ``concepteval_measures`` call; the meta-evaluation tables are in :mod:`.tables`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from neuroneval.concepteval.concepts import (
    activate_all,
    kmeans_concepts,
    neuron_concepts,
    pca_concepts,
    random_concepts,
)
from neuroneval.concepteval.faithfulness import FaithfulnessOptions, aggregate, position_differences
from neuroneval.concepteval.lm_split import (
    SITES,
    Site,
    concept_activation_function,
    site_activations,
    split_lm,
    transformer_blocks,
)
from neuroneval.concepteval.patterns import PatternOptions, input_patterns, output_patterns
from neuroneval.concepteval.probes import ProbeOptions, fit_probes
from neuroneval.concepteval.protocol import (
    FAMILIES,
    MIDDLE_LAYER,
    PLANTED,
    READABILITY_SIDES,
    RETEST_MODES,
    RUNS,
    SUBSET_ALL,
    RetestMode,
    family_of,
    studied_families,
)
from neuroneval.concepteval.readability import (
    EMBEDDING_SIMILARITIES,
    SIMILARITIES,
    CooccurrenceCorpus,
    ReadabilityOptions,
    readability,
)
from neuroneval.concepteval.sae import sae_concepts
from neuroneval.concepteval.simulation import SIMULATION_MEASURE, SimulationOptions, simulation_readability
from neuroneval.concepteval.sources import TokenSource, concept_kind
from neuroneval.options import Options, check_choice, check_range


def readability_measures(cooccurrence_sides: Sequence[str] = READABILITY_SIDES) -> list[str]:
    """IN-/OUT- × UCI, UMass, EmbDist, EmbCos (the names :func:`neuroneval.concepteval.readability` gives; UCI and
    UMass on ``cooccurrence_sides`` only, ``ReadabilityOptions.cooccurrence_sides``), then the simulation-based
    ``SIM-Corr`` (:func:`neuroneval.concepteval.simulation_readability`). The default lists every measure."""
    return [*(f"{side}-{name}" for side in READABILITY_SIDES for name in SIMILARITIES
              if name in EMBEDDING_SIMILARITIES or side in cooccurrence_sides), SIMULATION_MEASURE]


# ---------------------------------------------------------------- windows and planted truth

def cut_windows(n_tokens: int, length: int) -> np.ndarray:
    """Start offsets of the consecutive windows of ``length`` tokens in a stream of ``n_tokens`` (rest dropped)."""
    if length < 2:
        raise ValueError(f"window length must be >= 2, got {length}")
    return np.arange(n_tokens // length, dtype=np.int64) * length


def deal_windows(n_windows: int, *, fit: int, run: int, seed: int, run_seeds: Sequence[int],
                 retest: RetestMode = "same_data") -> dict[str, np.ndarray]:
    """Window indices of the fitting part and of each run (:data:`RUNS`): the first ``fit`` of a seeded shuffle
    fit the families; the test run then draws ``run`` windows with its seed from those left. With ``retest`` =
    ``same_data`` (paper 004 Sec. 4.1) the retest run reads the test run's windows; with ``new_data`` it draws its
    own ``run`` windows with its seed from those the test left, so the parts are disjoint. Indices come back
    sorted."""
    if retest not in RETEST_MODES:
        raise ValueError(f"concepteval.windows.retest must be one of {list(RETEST_MODES)}, got {retest!r}")
    if len(run_seeds) != len(RUNS):
        raise ValueError(f"concepteval.runs: need exactly {len(RUNS)} seeds (test, retest), got {list(run_seeds)}")
    drawn = 1 if retest == "same_data" else len(RUNS)
    needed = fit + drawn * run
    if needed > n_windows:
        raise ValueError(f"concepteval.windows: fit + {drawn}·run = {needed} windows, the split has {n_windows}")
    order = np.random.default_rng(seed).permutation(n_windows)
    parts = {"fit": np.sort(order[:fit])}
    pool = order[fit:]
    for name, run_seed in zip(RUNS[:drawn], run_seeds, strict=False):
        chosen = np.random.default_rng(run_seed).choice(pool.size, size=run, replace=False)
        parts[name] = np.sort(pool[chosen])
        pool = np.delete(pool, chosen)
    if retest == "same_data":
        parts[RUNS[1]] = parts[RUNS[0]].copy()
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
    for a label without positives or negatives.

    The metric engine's ``inverse_auc`` (000 Eq. A.8: the Mann–Whitney AUC of the score a against the label,
    ``AUC = ½ + Σ_{y_i=1} R'(a)_i / (|y|·(n − |y|))`` with centred ranks R'), whose degenerate labels (0.5 there)
    are NaN here: a concept cannot align with a planted concept that never or always holds.
    """
    import warnings

    from neuroneval import metrics

    labels = np.asarray(labels)
    if labels.shape[1] == 0:
        return np.zeros((np.shape(activations)[1], 0))
    positives = (labels >= 0.5).sum(axis=0)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="inverse_auc: a label with no positive")
        auc = np.asarray(metrics.score("inverse_auc", np.asarray(activations, dtype=np.float64),
                                       labels.astype(np.float64)), dtype=np.float64).reshape(-1, labels.shape[1])
    return np.where((positives > 0) & (positives < labels.shape[0]), auc, np.nan)


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
                   sae: Any | None = None, *, family_set: str = "all") -> tuple[list[Any], pd.DataFrame]:
    """The concept families of ``families`` (``concepteval.families``) that ``family_set`` builds
    (:data:`~neuroneval.concepteval.protocol.FAMILY_SETS`: ``paper`` = neurons and SAE features, ``all``) on
    fitting hidden states (n, m).

    Neurons and SAE features are ``count`` sampled with ``seed`` (SAE: among features that fire on the fitting
    states); probes are fitted to the planted labels; PCA and k-means give ``count`` directions; the floor is
    ``count`` random unit directions, centred at the mean state when ``centered``; a family absent or set to
    ``None`` is left out. Returns the concepts and a card
    ``concept, family, kind, positives, holdout_balanced_accuracy``.
    """
    unknown = sorted(set(families) - set(FAMILIES))
    if unknown:
        raise ValueError(f"concepteval.families: unknown families {unknown}; known: {list(FAMILIES)}")
    families = studied_families(dict(families), family_set)
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




@dataclass(frozen=True)
class WindowOptions(Options):
    """How the windows of the token stream are dealt out (``concepteval.windows``, :func:`deal_windows`): the
    shuffle's ``seed``, ``fit`` windows for the families, ``run`` windows per run, the J ``subsets`` each run is
    cut into for Cronbach's α (Eq. 14), and where the ``retest`` run's data comes from (:data:`RETEST_MODES`)."""

    seed: int = 0
    fit: int = 128
    run: int = 64
    subsets: int = 4
    retest: RetestMode = "same_data"

    def validate(self) -> None:
        for name in ("seed", "fit", "run"):
            check_range(self, name, 0, integer=True)
        check_range(self, "subsets", 2, integer=True)
        check_choice(self, "retest", RETEST_MODES)


def studied_layer(model: Any, layer: int | str) -> int:
    """The block index that ``concepteval.layer`` names: an integer as given, ``middle`` (:data:`MIDDLE_LAYER`)
    n_blocks // 2 — block 3 of Pythia-70M's 6, as paper 004 (Sec. 5.1); block 0 of a 1-block LM."""
    if layer == MIDDLE_LAYER:
        return len(transformer_blocks(model)) // 2
    if isinstance(layer, bool) or not isinstance(layer, int | np.integer):
        raise ValueError(f"concepteval.layer must be an integer or {MIDDLE_LAYER!r}, got {layer!r}")
    return int(layer)


def hidden_parts(source: TokenSource, *, window_length: int | None, windows: WindowOptions, run_seeds: Sequence[int],
                 planted: Sequence[str], layer: int | str, site: str) -> dict[str, np.ndarray]:
    """The token stream cut into windows of ``window_length`` tokens (``None``: the source's context length) and
    dealt out (:func:`deal_windows`): per part (``fit``, ``test``, ``retest``) its token windows
    ``<part>_windows`` (W, L) and the planted labels of their tokens ``<part>_labels`` (W·L, T; T = 0 for a user's
    corpus), the ``label_names``, and the hidden states ``fit_hidden`` (W·L, m) of the fitting windows at block
    ``layer``'s ``site`` (:func:`studied_layer`)."""

    length = int(window_length or source.context_length)
    if source.planted is None and planted:
        raise ValueError("concepteval.families.probe: a user's corpus has no planted concepts to fit probes to; "
                         "leave the probe family out")
    starts = cut_windows(source.token_ids.size, length)
    parts = deal_windows(starts.size, fit=windows.fit, run=windows.run, seed=windows.seed,
                         run_seeds=[int(seed) for seed in run_seeds], retest=windows.retest)
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
                                                 planted or ())
        arrays[f"{name}_labels"] = labels
    arrays["label_names"] = np.array(label_names, dtype=str)
    hidden = site_activations(source.model, arrays["fit_windows"], layer=studied_layer(source.model, layer),
                              site=site)
    arrays["fit_hidden"] = hidden.float().numpy().reshape(-1, hidden.shape[-1])
    print({name: int(indices.size) for name, indices in parts.items()}, "windows of", length, "tokens; hidden",
          arrays["fit_hidden"].shape, "planted", label_names)
    return arrays


@dataclass(frozen=True)
class MeasureOptions(Options):
    """Everything :func:`measure_run` reads from ``concepteval``: the studied ``layer`` and ``site`` (``resid``:
    the block's output; ``mlp``: its MLP neurons), the J ``subsets`` of a run, and the options of faithfulness,
    patterns (the replacement and excluded tokens come from the :class:`TokenSource`), readability and
    simulation."""

    layer: int | str = MIDDLE_LAYER
    site: Site = "mlp"
    subsets: int = 4
    faithfulness: FaithfulnessOptions = field(default_factory=FaithfulnessOptions)
    patterns: PatternOptions = field(default_factory=PatternOptions)
    readability: ReadabilityOptions = field(default_factory=ReadabilityOptions)
    simulation: SimulationOptions = field(default_factory=SimulationOptions)

    def validate(self) -> None:
        if self.layer != MIDDLE_LAYER:
            check_range(self, "layer", integer=True)
        check_choice(self, "site", SITES)
        check_range(self, "subsets", 2, integer=True)


def measure_run(source: TokenSource, windows: np.ndarray, labels: np.ndarray, label_names: Sequence[str],
                concepts: Sequence[Any], options: MeasureOptions, *, threads: int = 1
                ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """One run of the benchmark on ``windows``: every measure of every concept on the run and its J subsets
    (:func:`run_measures`; ``subset, concept, measure, value``), the run's patterns (:func:`pattern_table`) and each
    concept's planted alignment (:func:`planted_alignment`: the best AUC of its activation on the run's tokens for
    any planted label; NaN without labels)."""
    import torch

    torch.set_num_threads(max(1, int(threads)))
    model = source.model
    # GRAD takes a directional derivative through autograd.grad (a second derivative), which torch's CPU flash
    # attention kernel lacks for float32 (the default `sdpa` picks it): the plain attention has it, same values.
    model.set_attn_implementation("eager")
    corpus = CooccurrenceCorpus.from_tokens(source.token_ids, len(source.vocabulary), doc_offsets=source.doc_offsets,
                                            window=options.readability.window)
    pattern_options = replace(options.patterns, replacement_id=source.replacement_id,
                              exclude_ids=source.exclude_ids)
    layer = studied_layer(model, options.layer)
    scores, patterns = run_measures(model, windows, concepts, layer=layer, site=options.site,
                                    subsets=options.subsets, corpus=corpus,
                                    faithfulness_options=options.faithfulness, pattern_options=pattern_options,
                                    readability_options=options.readability,
                                    simulation_options=options.simulation, vocabulary=source.vocabulary,
                                    chat=chat_backend(options.simulation))
    names = [concept.name for concept in concepts]
    hidden = site_activations(model, windows, layer=layer, site=options.site).double()
    activations = activate_all(hidden, concepts).numpy().reshape(-1, len(concepts))
    truth = planted_alignment(names, alignment_auc(activations, labels), label_names)
    return scores, pattern_table(patterns, names, source.vocabulary), truth

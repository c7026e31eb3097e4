"""Simulation-based readability (paper 004 Sec. 3.2, Tab. 2 "LLM-based"; Bills et al. 2023): explain, then simulate.

Paper 004 sets its coherence measures beside the LLM-based score of Bills et al.: 1) summarise a concept in a
natural-language explanation from the samples that activate it most; 2) predict the concept's activation on
text from the explanation alone; 3) score the explanation by how well the simulated activations follow the true
ones (the paper's ``LLM-Score``, Figs. 2–3, Table 4). Here the explanation is written from one set of token windows
and scored on another (held-out) set:

- explainer: :func:`neuroneval.explain.top_token_explanations` (the explanation-methods package) on the
  concept's activations at every token position of the explaining windows: the ``n_tokens`` tokens most
  over-represented among its ``top_k`` top-activating positions,
  lift(t) = ((n_top(t) + s)/(k + s)) ÷ ((n_all(t) + s)/(N + s)), tokens in more than ``max_document_frequency``
  of all positions or in fewer than ``min_count`` top positions skipped;
- simulator (``backend: offline``): the token match s_i = 1[x_i ∈ E], x_i the token at scored position i and E
  the explanation's tokens;
- score: ``SIM-Corr`` = Pearson r between a_i and s_i over the scored positions,
  r = Σ(a_i − ā)(s_i − s̄) / √(Σ(a_i − ā)² Σ(s_i − s̄)²) (:func:`neuroneval.explain.simulation_correlation`; an
  explanation that predicts a constant, e.g. the empty ``"(none)"``, or a concept constant on the scored positions
  scores 0, as Bills et al.'s score does).

With ``backend: llm`` an OpenAI-compatible chat model explains and simulates instead
(:class:`neuroneval.explain.LLMExplainer`, :class:`neuroneval.explain.LLMSimulator`): each position is shown as
its last ``context_tokens`` tokens, the position's token last, and at most ``max_positions`` scored positions
per concept are drawn with ``seed`` (the LLM is asked about every one of them; 0 = all). The paper used GPT-4 as
the simulator; the default build stays offline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args

import numpy as np
import pandas as pd

from neuroneval.explain.base import ProbingData
from neuroneval.explain.captions import top_token_explanations
from neuroneval.explain.llm_backend import ChatBackend, LLMExplainer, LLMSimulator
from neuroneval.explain.options import CaptionOptions, LLMOptions
from neuroneval.explain.simulate import simulation_correlation
from neuroneval.options import Options, check_choice, check_range
from neuroneval.progress import progress_bar

#: The measure's name in the readability tables (paper 004's ``LLM-Score`` computed by simulation).
SIMULATION_MEASURE = "SIM-Corr"
SimulationBackend = Literal["offline", "llm"]
BACKENDS: tuple[SimulationBackend, ...] = get_args(SimulationBackend)
NO_EXPLANATION = "(none)"


@dataclass(frozen=True)
class SimulationOptions(Options):
    """Explainer ``top_k`` positions, ``n_tokens`` per explanation, lift ``smoothing``, ``max_document_frequency``
    and ``min_count`` (as :class:`neuroneval.explain.CaptionOptions`); ``backend`` (``offline`` | ``llm``); for the
    LLM: ``context_tokens`` shown per position, ``max_positions`` scored per concept (0: all) drawn with ``seed``,
    and the chat ``llm`` options."""

    top_k: int = 20
    n_tokens: int = 5
    smoothing: float = 1.0
    max_document_frequency: float = 0.5
    min_count: int = 2
    backend: SimulationBackend = "offline"
    context_tokens: int = 8
    max_positions: int = 0
    seed: int = 0
    llm: LLMOptions = field(default_factory=LLMOptions)

    def validate(self) -> None:
        check_range(self, "top_k", 1, integer=True)
        check_range(self, "n_tokens", 1, integer=True)
        check_range(self, "smoothing", 0, low_open=True)
        check_range(self, "max_document_frequency", 0, 1, low_open=True)
        check_range(self, "min_count", 1, integer=True)
        check_choice(self, "backend", BACKENDS)
        check_range(self, "context_tokens", 1, integer=True)
        check_range(self, "max_positions", 0, integer=True)
        check_range(self, "seed", 0, integer=True)

    def explainer_options(self) -> CaptionOptions:
        return CaptionOptions(top_k=self.top_k, n_words=self.n_tokens, smoothing=self.smoothing,
                              max_document_frequency=self.max_document_frequency, min_count=self.min_count)


def _flat(windows: np.ndarray, activations: np.ndarray, n_concepts: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    tokens = np.asarray(windows)
    values = np.asarray(activations, dtype=np.float64)
    if tokens.ndim != 2 or values.shape != (*tokens.shape, n_concepts):
        raise ValueError(f"{what}: expected windows (B, L) and activations (B, L, {n_concepts}), got "
                         f"{tokens.shape} and {values.shape}")
    if not np.issubdtype(tokens.dtype, np.integer) or tokens.size < 2:
        raise ValueError(f"{what}: windows must hold at least 2 integer token ids, got {tokens.dtype} {tokens.shape}")
    return tokens.reshape(-1), values.reshape(-1, n_concepts)


def token_explanations(token_ids: np.ndarray, activations: np.ndarray, concept_names: Sequence[str],
                       options: SimulationOptions = SimulationOptions()) -> list[np.ndarray]:
    """Each concept's explanation as token ids, best first (:func:`neuroneval.explain.top_token_explanations` on
    positions (N,) with activations (N, C)); an empty array where no token qualifies."""
    probing = ProbingData.build(np.zeros((len(token_ids), 0)), [], tokens=[str(int(t)) for t in token_ids])
    frame = top_token_explanations(activations, probing, options.explainer_options(), unit_names=concept_names)
    return [np.array([] if text == NO_EXPLANATION else [int(word) for word in text.split()], dtype=np.int64)
            for text in frame["explanation"].astype(str)]


def simulate_token_match(token_ids: np.ndarray, explanations: Sequence[np.ndarray]) -> np.ndarray:
    """The offline simulator: s_ic = 1[x_i ∈ E_c] for positions (N,) and C explanations → (N, C) float64."""
    tokens = np.asarray(token_ids)
    return np.stack([np.isin(tokens, explanation) for explanation in explanations], axis=1).astype(np.float64)


def position_contexts(windows: np.ndarray, vocabulary: Sequence[str], context_tokens: int) -> list[str]:
    """One text per position of windows (B, L): its last ``context_tokens`` tokens of the window, itself last."""
    tokens = np.asarray(windows)
    words = np.asarray([str(vocabulary[int(t)]).strip() or "·" for t in tokens.reshape(-1)]).reshape(tokens.shape)
    return [" ".join(words[b, max(0, position - context_tokens + 1): position + 1])
            for b in range(tokens.shape[0]) for position in range(tokens.shape[1])]


def simulation_readability(explain_windows: np.ndarray, explain_activations: np.ndarray, score_windows: np.ndarray,
                           score_activations: np.ndarray, concept_names: Sequence[str],
                           options: SimulationOptions = SimulationOptions(), *,
                           vocabulary: Sequence[str] | None = None,
                           backend: ChatBackend | None = None) -> pd.DataFrame:
    """``SIM-Corr`` of every concept: explain on windows (B₁, L) with activations (B₁, L, C), simulate and score
    on held-out windows (B₂, L) with activations (B₂, L, C). Returns ``concept, measure, value, explanation,
    n_positions`` (the explanation rendered with ``vocabulary`` when given).

    ``backend`` (an object with ``complete(messages) -> str``, e.g. :class:`neuroneval.explain.OpenAICompatibleChat`)
    is needed when ``options.backend`` is ``llm``, and so is ``vocabulary``.
    """
    names = [str(name) for name in concept_names]
    explain_tokens, explain_values = _flat(explain_windows, explain_activations, len(names), "explaining windows")
    score_tokens, score_values = _flat(score_windows, score_activations, len(names), "scored windows")
    if options.backend == "offline":
        explanations = token_explanations(explain_tokens, explain_values, names, options)
        simulated = simulate_token_match(score_tokens, explanations)
        values = simulation_correlation(score_values, simulated)
        texts = [" ".join(str(vocabulary[t]) if vocabulary is not None else str(t) for t in explanation)
                 or NO_EXPLANATION for explanation in explanations]
        n_positions = np.full(len(names), score_tokens.size)
    else:
        texts, values, n_positions = _llm_scores(explain_windows, explain_values, score_windows, score_values, names,
                                                 options, vocabulary, backend)
    return pd.DataFrame({"concept": names, "measure": SIMULATION_MEASURE, "value": values, "explanation": texts,
                         "n_positions": n_positions})


def _llm_scores(explain_windows: np.ndarray, explain_values: np.ndarray, score_windows: np.ndarray,
                score_values: np.ndarray, names: list[str], options: SimulationOptions,
                vocabulary: Sequence[str] | None, backend: ChatBackend | None) -> tuple[list[str], np.ndarray, Any]:
    if backend is None or vocabulary is None:
        raise ValueError("simulation backend 'llm' needs a chat backend and the vocabulary")
    llm = replace(options.llm, top_k=options.top_k)
    explain_probing = ProbingData.build(np.zeros((len(explain_values), 0)), [],
                                        contexts=position_contexts(explain_windows, vocabulary, options.context_tokens))
    frame = LLMExplainer(backend, llm).explain(explain_values, explain_probing, unit_names=names)
    score_probing = ProbingData.build(np.zeros((len(score_values), 0)), [],
                                      contexts=position_contexts(score_windows, vocabulary, options.context_tokens))
    simulator = LLMSimulator(backend, llm)
    rng = np.random.default_rng(options.seed)
    total = len(score_values)
    values, counts = np.empty(len(names)), np.empty(len(names), dtype=np.int64)
    texts = frame["explanation"].astype(str)
    for column, text in enumerate(progress_bar(texts, desc="SIM-Corr (LLM simulator)", unit="concept")):
        rows = (np.arange(total) if not options.max_positions or options.max_positions >= total
                else np.sort(rng.choice(total, size=options.max_positions, replace=False)))
        simulated = simulator.simulate(text, score_probing, rows)
        values[column] = simulation_correlation(score_values[rows, column:column + 1], simulated[:, None])[0]
        counts[column] = rows.size
    return frame["explanation"].astype(str).tolist(), values, counts

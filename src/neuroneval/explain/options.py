"""Typed options of the explanation methods and simulators, parsed once from a params mapping.

Every class is a frozen dataclass; ``Cls.from_params(mapping)`` rejects unknown keys by name and each field is
checked in ``__post_init__`` with a message naming the key, the expected value and what arrived. The defaults
are the published ones where a paper gives them (cited per field).
"""

from __future__ import annotations

from dataclasses import dataclass

from neuroneval.options import Options, OptionsError, check_fraction, check_range, check_text


@dataclass(frozen=True)
class DissectionOptions(Options):
    """Network Dissection (Bau et al. 2017; paper 000 App. F.1).

    quantile: the top fraction of activations that counts as active (0.005: threshold at the 99.5th percentile,
    as in Network Dissection and the truth of hidden-layer settings).
    """

    quantile: float = 0.005

    def validate(self) -> None:
        check_fraction(self, "quantile", high_open=True)


@dataclass(frozen=True)
class CompositionalOptions(Options):
    """Beam search over formulas (Compositional Explanations: IoU; INVERT: AUC).

    max_length: l, the most distinct concepts in a formula (paper 001 Table 2 uses 3). beam_size: formulas kept
    per step (Mu & Andreas use 10). quantile: top fraction that binarizes the unit (IoU objective only).
    operators: which of ``AND``, ``OR``, ``AND NOT`` may extend a formula.
    """

    max_length: int = 3
    beam_size: int = 10
    quantile: float = 0.005
    operators: tuple[str, ...] = ("AND", "OR", "AND NOT")

    def validate(self) -> None:
        check_range(self, "max_length", 1, integer=True)
        check_range(self, "beam_size", 1, integer=True)
        check_fraction(self, "quantile", high_open=True)
        operators = tuple(self.operators)
        allowed = ("AND", "OR", "AND NOT")
        if not operators or any(op not in allowed for op in operators) or len(set(operators)) != len(operators):
            raise OptionsError(f"CompositionalOptions.operators must be distinct values of {allowed}, "
                               f"got {self.operators!r}")
        object.__setattr__(self, "operators", operators)


@dataclass(frozen=True)
class ClusteredOptions(Options):
    """Clustered Compositional Explanations (La Rosa et al. 2023; paper 001 App. B.1).

    n_clusters: activation clusters r (5). max_length: formula length per cluster (3; 1 gives paper 001's
    "l = 5" variant). beam_size as for :class:`CompositionalOptions`. kmeans_iterations: Lloyd steps of the 1-D
    k-means over each unit's positive activations.
    """

    n_clusters: int = 5
    max_length: int = 3
    beam_size: int = 10
    kmeans_iterations: int = 50

    def validate(self) -> None:
        check_range(self, "n_clusters", 1, integer=True)
        check_range(self, "max_length", 1, integer=True)
        check_range(self, "beam_size", 1, integer=True)
        check_range(self, "kmeans_iterations", 1, integer=True)


@dataclass(frozen=True)
class ClipDissectOptions(Options):
    """CLIP-Dissect's SoftWPMI (Oikarinen & Weng 2023), defaults of the authors' code.

    top_k: top-activating images per unit (100). temperature: a in softmax(a·sim) over concepts (10).
    lam: weight of the concept prior (1). p_start, p_end: inclusion probability of the first and last of the
    top-k images (0.998, 0.97, linear in between).
    """

    top_k: int = 100
    temperature: float = 10.0
    lam: float = 1.0
    p_start: float = 0.998
    p_end: float = 0.97

    def validate(self) -> None:
        check_range(self, "top_k", 1, integer=True)
        check_range(self, "temperature", 0.0, low_open=True)
        check_range(self, "lam", 0.0)
        check_fraction(self, "p_start")
        check_fraction(self, "p_end")
        if self.p_end > self.p_start:
            raise OptionsError(f"ClipDissectOptions.p_end ({self.p_end}) must not exceed p_start ({self.p_start})")


@dataclass(frozen=True)
class LinearOptions(Options):
    """Linear Explanations (Oikarinen & Weng 2024), defaults of the authors' code.

    max_length: longest explanation (10; 1 gives Table 1's LE l=1). tolerance: least gain in validation
    correlation that keeps a concept (0.02); the length is where no candidate gains that much. width: candidates
    tried per step, taken from the ranking of a non-negative elastic net (10). l1_penalty, l1_ratio: that elastic
    net on standardized data (0.05, 0.99). val_fraction: held-out inputs scoring each step (0.2). seed: the split.
    """

    max_length: int = 10
    tolerance: float = 0.02
    width: int = 10
    l1_penalty: float = 0.05
    l1_ratio: float = 0.99
    val_fraction: float = 0.2
    seed: int = 0

    def validate(self) -> None:
        check_range(self, "max_length", 1, integer=True)
        check_range(self, "tolerance", 0.0)
        check_range(self, "width", 1, integer=True)
        check_range(self, "l1_penalty", 0.0, low_open=True)
        check_fraction(self, "l1_ratio")
        check_fraction(self, "val_fraction", high_open=True)
        check_range(self, "seed", 0, integer=True)


@dataclass(frozen=True)
class CaptionOptions(Options):
    """Caption words (MILAN/FALCON family) and top-activating tokens.

    top_k: top-activating inputs per unit (20). n_words: words in the explanation (3 for captions, use 1 for
    tokens). smoothing: pseudo-count of the over-representation ratio (1). max_document_frequency: words in more
    than this fraction of all inputs are treated as stop words (0.5). min_count: a word must occur in at least
    this many of the top inputs (2).
    """

    top_k: int = 20
    n_words: int = 3
    smoothing: float = 1.0
    max_document_frequency: float = 0.5
    min_count: int = 2

    def validate(self) -> None:
        check_range(self, "top_k", 1, integer=True)
        check_range(self, "n_words", 1, integer=True)
        check_range(self, "smoothing", 0.0, low_open=True)
        check_fraction(self, "max_document_frequency")
        check_range(self, "min_count", 1, integer=True)


@dataclass(frozen=True)
class RandomOptions(Options):
    """Random explanations (the floor): ``length`` random distinct concepts OR-ed together; ``seed``."""

    length: int = 1
    seed: int = 0

    def validate(self) -> None:
        check_range(self, "length", 1, integer=True)
        check_range(self, "seed", 0, integer=True)


@dataclass(frozen=True)
class LLMOptions(Options):
    """The OpenAI-compatible chat backend and the LLM explainer/simulator.

    base_url: the server (``http://127.0.0.1:8000``; ``/v1/chat/completions`` is appended). model: the name the
    server serves. api_key_env: environment variable holding a key, if the server wants one (the key itself
    never goes into params). temperature, max_tokens, timeout_s: request settings. top_k: contexts shown to the
    explainer. batch_size: inputs per simulator prompt. retries: attempts after a failed request or reply.
    context_tokens: tokens of text before each position an LM unit's context shows (the workflow's ``llm``).
    """

    base_url: str = "http://127.0.0.1:8000"
    model: str = "default"
    api_key_env: str | None = None
    temperature: float = 0.0
    max_tokens: int = 512
    timeout_s: float = 120.0
    top_k: int = 10
    batch_size: int = 20
    retries: int = 1
    context_tokens: int = 16

    def validate(self) -> None:
        if not isinstance(self.base_url, str) or not self.base_url.startswith(("http://", "https://")):
            raise OptionsError(f"LLMOptions.base_url must be an http(s) URL, got {self.base_url!r}")
        check_text(self, "model")
        check_text(self, "api_key_env", optional=True)
        check_range(self, "temperature", 0.0)
        check_range(self, "max_tokens", 1, integer=True)
        check_range(self, "timeout_s", 0.0, low_open=True)
        check_range(self, "top_k", 1, integer=True)
        check_range(self, "batch_size", 1, integer=True)
        check_range(self, "retries", 0, integer=True)
        check_range(self, "context_tokens", 1, integer=True)

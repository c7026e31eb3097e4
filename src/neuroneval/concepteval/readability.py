"""Readability of concepts as the coherence of their patterns (paper 004, Sec. 3.2, Eq. 9–12).

For a pattern x¹ … x^k (token ids of :mod:`~neuroneval.concepteval.patterns`, in rank order), coherence is the
mean of a pairwise similarity μ over the pairs i < j of *distinct* tokens:

- UCI     μ = log[(P(xⁱ, xʲ) + ε) / (P(xⁱ) P(xʲ))]      (Eq. 9)
- UMass   μ = log[(P(xⁱ, xʲ) + ε) / P(xʲ)]              (Eq. 10, xʲ the later-ranked token of the pair)
- EmbDist μ = −‖e(xⁱ) − e(xʲ)‖₂                          (Eq. 11)
- EmbCos  μ = e(xⁱ)·e(xʲ) / (‖e(xⁱ)‖ ‖e(xʲ)‖)            (Eq. 12)

P(x) is the fraction of corpus units (documents, or windows of them) that contain x and P(x, y) the fraction
that contain both, as the authors count; e is a row of an embedding matrix (the model's own input embeddings,
App. F). IN-/OUT- name the input- and output-side patterns.

A token repeated in a pattern counts once: the pair of a token with itself is never scored. (The authors'
public code pairs every token with a copy of itself: its ``itc.py`` filters the pattern with a scalar boolean
index, which adds an axis, and its one-token branch then ``np.repeat``s the flattened pattern, so every token
enters twice and P(x, x) = P(x) inflates IN-UCI/IN-UMass; it also averages UMass over all ordered pairs i ≠ j
and counts P(x) by substring matching — docs/concepteval.md lists every difference.) Pairs that involve a token
absent from the corpus have no UCI/UMass (division by P = 0) and are skipped; a pattern with no scorable pair gets
NaN. All concepts are scored at once: one sparse product gives the co-occurrence counts of every token that appears in
any pattern.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sparse

from neuroneval.concepteval.protocol import READABILITY_SIDES
from neuroneval.options import Options, OptionsError, check_range

SIMILARITIES = ("UCI", "UMass", "EmbDist", "EmbCos")
#: The similarities from embeddings (scored on both sides); the others count corpus co-occurrences.
EMBEDDING_SIMILARITIES = ("EmbDist", "EmbCos")
#: Per similarity: (coherence of each pattern (C,), number of pairs scored (C,)).
Coherence = dict[str, tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class ReadabilityOptions(Options):
    """``epsilon`` of Eq. 9–10 (the authors use 1e-10), ``window``: corpus units are documents cut into windows of
    this many tokens (0: whole documents; the paper's samples are 128-token windows), ``cooccurrence_sides``: the
    pattern sides scored by UCI/UMass — the input side only, as paper 004 (Sec. 5.1: "we apply UCI and UMass
    measures only on the input side", since tokens the output side enhances may not occur in the corpus), or
    ``("IN", "OUT")``; EmbDist/EmbCos score both sides."""

    epsilon: float = 1e-10
    window: int = 0
    cooccurrence_sides: tuple[str, ...] = ("IN",)

    def validate(self) -> None:
        check_range(self, "epsilon", 0, low_open=True)
        check_range(self, "window", 0, integer=True)
        if not self.cooccurrence_sides or not set(self.cooccurrence_sides) <= set(READABILITY_SIDES):
            raise OptionsError(f"ReadabilityOptions.cooccurrence_sides must be a non-empty subset of "
                               f"{list(READABILITY_SIDES)}, got {self.cooccurrence_sides!r}")


@dataclass(frozen=True)
class CooccurrenceCorpus:
    """Which token occurs in which corpus unit: ``presence`` (units × vocabulary) 0/1 sparse matrix."""

    presence: sparse.csr_matrix

    @property
    def n_units(self) -> int:
        return int(self.presence.shape[0])

    @classmethod
    def from_tokens(cls, token_ids: np.ndarray, vocab_size: int, *, doc_offsets: np.ndarray | None = None,
                    window: int = 0) -> CooccurrenceCorpus:
        """Units from a token stream: documents ``[doc_offsets[d], doc_offsets[d+1])`` (default: the whole stream
        is one document), each cut into windows of ``window`` tokens when ``window`` > 0."""
        tokens = np.asarray(token_ids, dtype=np.int64)
        if tokens.ndim != 1 or tokens.size == 0:
            raise ValueError(f"token_ids must be a non-empty 1-d array, got shape {tokens.shape}")
        if tokens.min() < 0 or tokens.max() >= vocab_size:
            raise ValueError(f"token ids must lie in [0, {vocab_size}), got {tokens.min()}..{tokens.max()}")
        offsets = np.array([0, tokens.size]) if doc_offsets is None else np.asarray(doc_offsets, dtype=np.int64)
        if offsets.ndim != 1 or offsets[0] != 0 or offsets[-1] != tokens.size or np.any(np.diff(offsets) < 0):
            raise ValueError("doc_offsets must rise from 0 to len(token_ids)")
        document = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
        if window:
            position = np.arange(tokens.size) - offsets[document]
            windows_per_doc = -(-np.diff(offsets) // window)
            unit = (np.concatenate([[0], np.cumsum(windows_per_doc)[:-1]])[document] + position // window)
            n_units = int(windows_per_doc.sum())
        else:
            unit, n_units = document, offsets.size - 1
        presence = sparse.csr_matrix((np.ones(tokens.size), (unit, tokens)), shape=(n_units, vocab_size))
        presence.data[:] = 1.0  # duplicates were summed: presence, not counts
        return cls(presence)

    def probabilities(self, token_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(P(x) for each token (n,), P(x, y) for each pair (n, n)) of distinct-or-not token ids ``token_ids``."""
        columns = self.presence[:, np.asarray(token_ids, dtype=np.int64)]
        joint = (columns.T @ columns).toarray() / self.n_units
        return np.asarray(columns.sum(axis=0)).ravel() / self.n_units, joint


def _pattern_pairs(patterns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Validated patterns (C, k) and the mask (C, k, k) of pairs i < j of valid, first-occurrence tokens."""
    tokens = np.asarray(patterns)
    if tokens.ndim != 2 or tokens.shape[0] == 0:
        raise ValueError(f"patterns must have shape (C, k) with C >= 1, got {tokens.shape}")
    if not np.issubdtype(tokens.dtype, np.integer):
        raise ValueError(f"patterns must hold integer token ids (−1 for none), got dtype {tokens.dtype}")
    k = tokens.shape[1]
    same = tokens[:, :, None] == tokens[:, None, :]
    repeated = (same & np.tril(np.ones((k, k), dtype=bool), -1)).any(axis=2)  # equals an earlier token
    keep = (tokens >= 0) & ~repeated
    return tokens, keep[:, :, None] & keep[:, None, :] & np.triu(np.ones((k, k), dtype=bool), 1)


def _mean_over_pairs(values: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    usable = mask & np.isfinite(values)
    counts = usable.sum(axis=(1, 2))
    totals = np.where(usable, values, 0.0).sum(axis=(1, 2))
    return np.where(counts > 0, totals / np.maximum(counts, 1), np.nan), counts


def cooccurrence_coherence(patterns: np.ndarray, corpus: CooccurrenceCorpus,
                           options: ReadabilityOptions = ReadabilityOptions()) -> Coherence:
    """UCI and UMass coherence (Eq. 9, 10) of each pattern: ``{name: (values (C,), scored pairs (C,))}``."""
    tokens, mask = _pattern_pairs(patterns)
    if tokens.max() >= corpus.presence.shape[1]:
        raise ValueError(f"pattern token {tokens.max()} outside the corpus vocabulary {corpus.presence.shape[1]}")
    vocabulary, index = np.unique(np.where(tokens >= 0, tokens, 0), return_inverse=True)
    index = index.reshape(tokens.shape)
    single, joint = corpus.probabilities(vocabulary)
    p_i, p_j = single[index][:, :, None], single[index][:, None, :]
    p_ij = joint[index[:, :, None], index[:, None, :]]
    with np.errstate(divide="ignore", invalid="ignore"):
        uci = np.where((p_i > 0) & (p_j > 0), np.log((p_ij + options.epsilon) / (p_i * p_j)), np.nan)
        umass = np.where(p_j > 0, np.log((p_ij + options.epsilon) / p_j), np.nan)
    return {"UCI": _mean_over_pairs(uci, mask), "UMass": _mean_over_pairs(umass, mask)}


def embedding_coherence(patterns: np.ndarray, embeddings: np.ndarray) -> Coherence:
    """EmbDist and EmbCos coherence (Eq. 11, 12) with token embeddings (V, d): ``{name: (values, pairs)}``."""
    tokens, mask = _pattern_pairs(patterns)
    table = np.asarray(embeddings, dtype=np.float64)
    if table.ndim != 2 or not np.isfinite(table).all():
        raise ValueError(f"embeddings must be a finite (V, d) matrix, got shape {table.shape}")
    if tokens.max() >= table.shape[0]:
        raise ValueError(f"pattern token {tokens.max()} outside the embedding matrix ({table.shape[0]} rows)")
    vectors = table[np.where(tokens >= 0, tokens, 0)]  # (C, k, d)
    gram = np.einsum("cid,cjd->cij", vectors, vectors)
    squared = np.einsum("cid,cid->ci", vectors, vectors)
    distance = -np.sqrt(np.maximum(squared[:, :, None] + squared[:, None, :] - 2 * gram, 0.0))
    norms = np.sqrt(squared)
    with np.errstate(divide="ignore", invalid="ignore"):
        cosine = np.where(norms[:, :, None] * norms[:, None, :] > 0, gram / (norms[:, :, None] * norms[:, None, :]),
                          np.nan)
    return {"EmbDist": _mean_over_pairs(distance, mask), "EmbCos": _mean_over_pairs(cosine, mask)}


def readability(concept_names: list[str], *, input_patterns: np.ndarray | None = None,
                output_patterns: np.ndarray | None = None, corpus: CooccurrenceCorpus | None = None,
                embeddings: np.ndarray | None = None,
                options: ReadabilityOptions = ReadabilityOptions()) -> pd.DataFrame:
    """IN/OUT × UCI, UMass, EmbDist, EmbCos: a tidy table ``concept, measure, value, n_pairs``.

    A side is scored when its patterns are given; UCI/UMass need ``corpus`` (and score the sides of
    ``options.cooccurrence_sides`` only), EmbDist/EmbCos ``embeddings``.
    """
    frames = []
    for side, patterns in (("IN", input_patterns), ("OUT", output_patterns)):
        if patterns is None:
            continue
        if len(patterns) != len(concept_names):
            raise ValueError(f"{side} patterns: {len(patterns)} rows for {len(concept_names)} concepts")
        scores = {}
        if corpus is not None and side in options.cooccurrence_sides:
            scores.update(cooccurrence_coherence(patterns, corpus, options))
        if embeddings is not None:
            scores.update(embedding_coherence(patterns, embeddings))
        for name, (values, pairs) in scores.items():
            frames.append(pd.DataFrame({"concept": concept_names, "measure": f"{side}-{name}", "value": values,
                                        "n_pairs": pairs}))
    if not frames:
        raise ValueError("readability: give patterns of at least one side and a corpus or embeddings")
    return pd.concat(frames, ignore_index=True)

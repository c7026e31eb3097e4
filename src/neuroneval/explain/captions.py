"""Text explanations from what the top-activating inputs have in common (MILAN/FALCON family, top tokens).

Caption words: each input has a caption; a word's presence matrix D (N × V, sparse) and the unit's top-k inputs
U_k give, for every unit and word at once (one sparse product ``Uᵀ D``), the over-representation

    lift(k, w) = (n_top(k, w) + s) / (k + s) ÷ (n_all(w) + s) / (N + s),

the smoothed ratio of the word's frequency among the top inputs to its frequency overall (s = smoothing).
Words in more than ``max_document_frequency`` of all inputs (stop words) and words seen in fewer than
``min_count`` top inputs are skipped; the explanation is the ``n_words`` words of highest lift, best first.

Top tokens (language-model units whose rows are token positions): the same statistic with one "word" per
position, the token itself, so the explanation is the token most over-represented where the unit fires.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from neuroneval.explain.base import ProbingData, as_activations, check_rows
from neuroneval.explain.explanation import Text, explanation_frame
from neuroneval.explain.options import CaptionOptions

_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")


def words_of(text: str) -> list[str]:
    """Lower-case word tokens of a caption."""
    return _WORD.findall(text.lower())


def presence_matrix(documents: Sequence[Sequence[str]]) -> tuple[sparse.csr_matrix, list[str]]:
    """(N × V) 0/1 CSR matrix: does document i contain word v; vocabulary sorted."""
    vocabulary = sorted({word for document in documents for word in document})
    index = {word: column for column, word in enumerate(vocabulary)}
    rows, columns = [], []
    for row, document in enumerate(documents):
        present = sorted({index[word] for word in document})
        rows.extend([row] * len(present))
        columns.extend(present)
    data = np.ones(len(rows), dtype=np.float64)
    return sparse.csr_matrix((data, (rows, columns)), shape=(len(documents), len(vocabulary))), vocabulary


def overrepresented_words(activations: np.ndarray, presence: sparse.csr_matrix, vocabulary: Sequence[str],
                          options: CaptionOptions) -> tuple[list[list[str]], np.ndarray]:
    """For each unit, its ``n_words`` words of highest lift and the best lift (module docstring)."""
    n, n_units = activations.shape
    top_k = min(options.top_k, n)
    top = np.argsort(-activations, axis=0, kind="stable")[:top_k]
    indicator = sparse.csr_matrix((np.ones(top.size), (top.T.ravel(), np.repeat(np.arange(n_units), top_k))),
                                  shape=(n, n_units))
    top_counts = np.asarray((indicator.T @ presence).todense())  # (K, V)
    all_counts = np.asarray(presence.sum(axis=0)).ravel()
    s = options.smoothing
    lift = ((top_counts + s) / (top_k + s)) / ((all_counts + s) / (n + s))
    allowed = (all_counts <= options.max_document_frequency * n)[None, :] & (top_counts >= options.min_count)
    lift = np.where(allowed, lift, -np.inf)
    order = np.argsort(-lift, axis=1, kind="stable")[:, :options.n_words]
    words = [[vocabulary[v] for v in row if np.isfinite(lift[k, v])] for k, row in enumerate(order)]
    best = np.where(np.isfinite(lift[np.arange(n_units), order[:, 0]]), lift[np.arange(n_units), order[:, 0]], 0.0)
    return words, best


def caption_explanations(activations: Any, probing: ProbingData, options: CaptionOptions | None = None, *,
                         unit_names: Sequence[str] | None = None) -> pd.DataFrame:
    """Caption words over-represented among each unit's top-activating inputs (kind ``text``, column ``lift``).

    A unit with no qualifying word is explained by the empty-handed text ``"(none)"`` with lift 0.
    """
    options = options or CaptionOptions()
    matrix, names = as_activations(activations, unit_names)
    check_rows(matrix, probing)
    presence, vocabulary = presence_matrix([words_of(caption) for caption in probing.require("captions", "captions")])
    words, lift = overrepresented_words(matrix, presence, vocabulary, options)
    return explanation_frame(names, [Text(" ".join(w) if w else "(none)") for w in words], {"lift": lift})


def top_token_explanations(activations: Any, probing: ProbingData, options: CaptionOptions | None = None, *,
                           unit_names: Sequence[str] | None = None) -> pd.DataFrame:
    """The token most over-represented at a text unit's top-activating positions (``probing.tokens``).

    Uses ``options.n_words`` tokens (set it to 1 for a single token); kind ``text``, column ``lift``.
    """
    options = options or CaptionOptions(n_words=1)
    matrix, names = as_activations(activations, unit_names)
    check_rows(matrix, probing)
    presence, vocabulary = presence_matrix([[token] for token in probing.require("tokens", "top tokens")])
    words, lift = overrepresented_words(matrix, presence, vocabulary, options)
    return explanation_frame(names, [Text(" ".join(w) if w else "(none)") for w in words], {"lift": lift})

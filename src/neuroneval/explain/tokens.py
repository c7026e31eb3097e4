"""Top-token explanations of text units in concept terms (the benchmark's ``top_tokens`` method, issue 15).

:func:`~neuroneval.explain.captions.top_token_explanations` names the tokens most over-represented at a unit's
``top_k`` top-activating positions, by the smoothed lift

    lift(k, t) = (n_top(k, t) + s) / (k + s) ÷ (n_all(t) + s) / (N + s).

The benchmark gives it, as each position's token, the *next* token named as the LM settings' concepts
(``next:<w>``, :func:`neuroneval.worlds.text.next_token_names`): a next-token unit ``tok:<w>`` fires where the
next token is likely ``<w>``, so its explanation should be ``next:<w>``. When every chosen token is a concept of
the probing data, the explanation is that concept, or the OR of several (the position's token is one of them:
s = 1 − Π_t (1 − c_t), paper 001 Eq. 17), so the concept simulator and the NeuronEval metrics score it; a token
outside the concept table (a rare word) keeps the explanation as text (not scored).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from functools import reduce
from typing import Any

import pandas as pd

from neuroneval.explain.base import ProbingData
from neuroneval.explain.captions import top_token_explanations
from neuroneval.explain.explanation import Concept, Explanation, Or, Text, explanation_frame
from neuroneval.explain.options import CaptionOptions

NO_TOKEN = "(none)"


def token_explanation(tokens: Sequence[str], concept_names: Collection[str]) -> Explanation:
    """A unit's explanation from its over-represented tokens, best first: the concept they name (one token) or
    ``t1 OR t2 …`` when every token is a concept name; otherwise the tokens as text; ``"(none)"`` for none."""
    if tokens and all(token in concept_names for token in tokens):
        return reduce(Or, [Concept(token) for token in tokens[1:]], Concept(tokens[0]))
    return Text(" ".join(tokens) if tokens else NO_TOKEN)


def top_token_concept_explanations(activations: Any, probing: ProbingData, options: CaptionOptions | None = None,
                                   *, unit_names: Sequence[str] | None = None) -> pd.DataFrame:
    """:func:`top_token_explanations` (``probing.tokens``; ``n_words`` tokens, default 1) with each unit's tokens
    turned into a concept explanation where they name concepts of ``probing`` (:func:`token_explanation`);
    column ``lift`` (the best token's)."""
    frame = top_token_explanations(activations, probing, options or CaptionOptions(n_words=1), unit_names=unit_names)
    names = set(probing.concept_names)
    explanations = [token_explanation([] if text == NO_TOKEN else text.split(" "), names)
                    for text in frame["explanation"].astype(str)]
    return explanation_frame(frame["unit"].tolist(), explanations, {"lift": frame["lift"].to_numpy()})

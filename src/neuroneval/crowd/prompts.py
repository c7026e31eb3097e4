"""What a rater reads: the wording of an explanation on the task pages, and a formula explanation's prior.

Wording (:func:`rater_wording`): a concept name is shown as the user's wording from a prompts file
(:func:`read_prompts`, CSV ``concept,text``), else as its readable form (:func:`readable_name`: ``:`` and ``_``
become spaces, so ``class:5`` reads "class 5"). A formula is put in words with its concepts' wordings:
``red AND NOT striped`` reads "red and not striped", ``a AND (b OR c)`` reads "a and (b or c)". A prompt given
for a whole explanation string wins over its parts; other explanations (linear, clustered, free text) are shown
as their readable form.

Prior (:func:`formula_priors`): the Bayes prior and the pseudo sampling distribution (Eq. 4) need a score in
[0, 1] of the explanation on every input. A concept explanation's score is its pseudo-label column; a formula's is
the fuzzy-logic simulation of the formula over those columns (:func:`neuroneval.explain.simulate.simulate`,
paper 001 Eq. 16–18: AND → s₁·s₂, OR → 1 − (1 − s₁)(1 − s₂), NOT → 1 − s), which stays in [0, 1].
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd


def readable_name(name: str) -> str:
    """A concept name as a rater reads it: runs of ``:`` and ``_`` become one space.

    >>> readable_name("class:5"), readable_name("object:red_circle")
    ('class 5', 'object red circle')
    """
    return re.sub(r"[:_]+", " ", str(name)).strip() or str(name)


def read_prompts(path: str | Path) -> dict[str, str]:
    """A prompts CSV (``concept,text``: the rater-facing wording of each concept) as ``{concept: text}``.

    Raises ``ValueError`` naming the file, and the line and column of an empty cell or a concept listed twice.
    """
    source = Path(path)
    try:
        table = pd.read_csv(source, dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError as error:
        raise ValueError(f"{source}: empty file; expected header concept,text") from error
    missing = [column for column in ("concept", "text") if column not in table.columns]
    if missing:
        raise ValueError(f"{source}, line 1: missing column(s) {', '.join(missing)}; expected header concept,text")
    prompts: dict[str, str] = {}
    for line, (concept, text) in enumerate(zip(table["concept"], table["text"], strict=True), start=2):
        for column, value in (("concept", concept), ("text", text)):
            if not value.strip():
                raise ValueError(f"{source}, line {line}, column {column}: empty value")
        if concept in prompts:
            raise ValueError(f"{source}, line {line}, column concept: {concept!r} is listed twice")
        prompts[concept] = text.strip()
    return prompts


def _words(node: object, prompts: Mapping[str, str]) -> str:
    from neuroneval.explain.explanation import And, Concept, Not, Or

    if isinstance(node, Concept):
        return prompts.get(node.name, readable_name(node.name))
    if isinstance(node, Not):
        inner = _words(node.operand, prompts)
        return f"not {inner}" if isinstance(node.operand, Concept | Not) else f"not ({inner})"
    if isinstance(node, And | Or):
        left_grouped, right_grouped = node._grouped()
        parts = []
        for operand, grouped in ((node.left, left_grouped), (node.right, right_grouped)):
            text = _words(operand, prompts)
            parts.append(f"({text})" if grouped is not None and isinstance(operand, grouped) else text)
        return f" {node.operator.lower()} ".join(parts)
    raise TypeError(f"not a formula: {node!r}")


def rater_wording(explanation: str, prompts: Mapping[str, str] | None = None) -> str:
    """The wording of ``explanation`` on a task page (module docstring).

    >>> rater_wording("red AND NOT striped"), rater_wording("class:5", {"class:5": "the digit 5"})
    ('red and not striped', 'the digit 5')
    """
    from neuroneval.explain.explanation import And, Concept, ExplanationSyntaxError, Not, Or, parse

    prompts = prompts or {}
    if explanation in prompts:
        return prompts[explanation]
    try:
        node = parse(explanation)
    except (ExplanationSyntaxError, ValueError):
        return readable_name(explanation)
    if isinstance(node, Concept | Not | And | Or):
        return _words(node, prompts)
    return readable_name(explanation)


def formula_priors(explanations: Sequence[str], pseudo_labels: pd.DataFrame, *, source: str,
                   pairs_source: str = "the pairs") -> pd.DataFrame:
    """``pseudo_labels`` with a column added for every explanation that is a formula over its concept columns.

    The added column is the fuzzy-logic simulation of the formula (module docstring) on each input; explanations
    that already are columns are left as they are.

    Raises
    ------
    ValueError
        Naming ``pairs_source`` and the explanation when it is neither a column of ``source`` nor a formula over
        its columns (e.g. a linear or free-text explanation, or one naming an unknown concept).
    """
    from neuroneval.explain.explanation import And, ExplanationSyntaxError, Not, Or, parse
    from neuroneval.explain.simulate import UnknownConceptError, simulate

    concept_names = [column for column in pseudo_labels.columns if column != "input_id"]
    matrix = pseudo_labels[concept_names].to_numpy(dtype=np.float64)
    added: dict[str, np.ndarray] = {}
    for explanation in dict.fromkeys(explanations):
        if explanation in pseudo_labels.columns:
            continue
        where = f"{pairs_source}, explanation {explanation!r}: "
        try:
            node = parse(explanation)
        except (ExplanationSyntaxError, ValueError) as error:
            raise ValueError(f"{where}not a concept column of {source} and not a formula ({error})") from error
        if not isinstance(node, Not | And | Or):
            raise ValueError(f"{where}not a concept column of {source}, nor a formula (AND/OR/NOT) over its columns; "
                             "only those have a pseudo-label prior")
        try:
            added[explanation] = simulate(node, matrix, concept_names, where=where)
        except UnknownConceptError as error:
            raise ValueError(f"{error} ({source})") from error
    return pseudo_labels.assign(**added) if added else pseudo_labels

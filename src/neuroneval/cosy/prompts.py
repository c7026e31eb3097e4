"""Prompt templates of CoSy (paper 002, App. A.3, Table 5): explanation text <-> generator prompt."""

from __future__ import annotations

from collections.abc import Sequence

#: The five prompt templates of 002 App. A.3 (Table 5), in the paper's numbering order.
TEMPLATES: dict[str, str] = {
    "a": "a {concept}",
    "painting": "a painting of {concept}",
    "photo": "photo of {concept}",
    "realistic": "realistic photo of {concept}",
    "closeup": "realistic photo of a close up of {concept}",
}
#: The paper's default (Prompt 5, best for object-centric datasets).
DEFAULT_TEMPLATE = "closeup"


def fill_template(template: str, explanation: str) -> str:
    """The prompt of ``explanation`` under ``template`` (a key of :data:`TEMPLATES` or a text with ``{concept}``).

    >>> fill_template("closeup", "a red striped circle")
    'realistic photo of a close up of a red striped circle'
    """
    pattern = TEMPLATES.get(template, template)
    if "{concept}" not in pattern:
        raise ValueError(f"unknown prompt template {template!r}: use one of {sorted(TEMPLATES)} or a text "
                         "containing '{concept}'")
    explanation = str(explanation).strip()
    if not explanation:
        raise ValueError("empty explanation: nothing to put in the prompt template")
    return pattern.replace("{concept}", explanation)


def strip_template(prompt: str, templates: Sequence[str] = tuple(TEMPLATES.values())) -> str:
    """The concept words of a prompt: the longest matching template's fixed text removed (else the prompt).

    >>> strip_template("realistic photo of a close up of a red striped circle")
    'a red striped circle'
    """
    text = " ".join(str(prompt).split())
    best = text
    for pattern in sorted(templates, key=len, reverse=True):
        prefix, _, suffix = pattern.partition("{concept}")
        if text.startswith(prefix) and text.endswith(suffix) and len(text) > len(prefix) + len(suffix):
            best = text[len(prefix) : len(text) - len(suffix)].strip()
            break
    return best

"""Which concepts a method of an explained setting may read, and which concept table simulates its explanations.

Paper 001 (Sec. 5.1) finds the Broden-based methods (NetDissect, CompExp, CCE) weak on late-layer ImageNet units
"likely because their concept sets do not include the relevant higher level concepts". To test that cause, a
setting may give some methods a subset of its concepts (``explain.settings.<setting>.method_concepts``: the
methods and the concept-name prefixes they read, e.g. the embedded world's low-level ``colour:`` and ``texture:``
concepts, as Broden's colours and textures) while every other method reads all of them.

The held-out simulations of paper 001 read SigLIP pseudo-labels (App. B.2: "SigLIP based simulation"); a setting's
``scored_on`` says which table our simulations read: :data:`SCORED_ON`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from neuroneval.options import Options, OptionsError

#: The concept table the held-out simulations of an explained setting read: ``labels`` (the world's ground-truth
#: labels; the default) or ``setting`` (the setting's own concept table: the CLIP pseudo-labels of a
#: ``pseudo:clip`` setting, paper 001's SigLIP-based simulation).
SCORED_ON: tuple[str, ...] = ("labels", "setting")


@dataclass(frozen=True)
class MethodConcepts(Options):
    """The concept subset some methods of a setting read (``explain.settings.<setting>.method_concepts``).

    methods: the method names (``netdissect``, ``compexp``, ...; their ``_l1`` runs follow them). prefixes: the
    concept-name prefixes those methods read (at least one; each must select concepts of the setting).
    """

    methods: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()

    def validate(self) -> None:
        for name in ("methods", "prefixes"):
            values = tuple(getattr(self, name))
            if not values or any(not isinstance(value, str) or not value for value in values):
                raise OptionsError(f"MethodConcepts.{name} must be a non-empty list of names, got {values!r}")
            if len(set(values)) != len(values):
                raise OptionsError(f"MethodConcepts.{name} repeats a name: {values!r}")
            object.__setattr__(self, name, values)


def method_concept_prefixes(method: str, setting_prefixes: Sequence[str],
                            method_concepts: Mapping[str, Any] | MethodConcepts | None, *,
                            setting: str = "") -> list[str]:
    """The concept-name prefixes ``method`` reads in a setting: ``method_concepts.prefixes`` where the method (its
    base name, ``compexp`` for ``compexp_l1`` is the caller's) is one of ``method_concepts.methods``, else the
    setting's own ``setting_prefixes`` (empty: every concept).

    A subset must lie inside the setting's concepts: each of its prefixes must start with one of the setting's
    prefixes (any prefix when the setting reads every concept), else a ``ValueError`` names the setting, the key
    and the prefix.

    Examples
    --------
    >>> method_concept_prefixes("compexp", ["class:", "colour:"], {"methods": ["compexp"], "prefixes": ["colour:"]})
    ['colour:']
    >>> method_concept_prefixes("invert", ["class:", "colour:"], {"methods": ["compexp"], "prefixes": ["colour:"]})
    ['class:', 'colour:']
    """
    if not method_concepts:
        return list(setting_prefixes)
    subset = method_concepts if isinstance(method_concepts, MethodConcepts) else MethodConcepts.from_params(
        method_concepts)
    outside = [prefix for prefix in subset.prefixes
               if setting_prefixes and not prefix.startswith(tuple(setting_prefixes))]
    if outside:
        raise ValueError(f"explain.settings.{setting}.method_concepts.prefixes: {outside[0]!r} selects no concept of "
                         f"the setting (its concepts.prefixes are {list(setting_prefixes)})")
    return list(subset.prefixes) if method in subset.methods else list(setting_prefixes)


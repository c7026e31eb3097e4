"""The tie convention of a call (the ``ties`` parameter of :func:`neuroneval.metrics.score`), typed and resolved once.

:data:`TieMode` names the two conventions; :func:`tie_rule` resolves one into a :class:`TieRule`, the facts the
kernels read (which ranks, which values break ties, which closed forms apply, the degenerate AUC, the authors'
covariance factor). The engine resolves it once per call and hands it to every kernel on
:attr:`neuroneval.metrics.context.Context.ties`, so no kernel compares the mode as a string.

``"average"``
    The statistical convention: tied values share their average rank (``scipy.stats.rankdata``), Spearman of any
    vector with itself is 1, AUC counts ties ½, Pearson is the textbook estimate; 0/1 concepts are scored by the
    closed forms of their average ranks, without a sort.
``"reference"``
    Paper 000's published code (Tables C.1–C.4): ties are broken by float32 noise ``x + 1e-7·U`` and a stable sort
    (:mod:`neuroneval.metrics.ranks`), Pearson and Spearman carry the factor ``(n − 1)/n`` of a biased covariance
    over unbiased deviations, a degenerate AUC is 0, and a 0/1 unit takes the authors' binary top-and-random sample
    (:mod:`neuroneval.metrics.topandrandom`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from neuroneval.metrics.backend import Backend
from neuroneval.metrics.ranks import average_ranks, stable_ranks

#: The tie conventions of every metric (``help(neuroneval.metrics.score)``).
TieMode = Literal["average", "reference"]
TIES: tuple[TieMode, ...] = get_args(TieMode)


@dataclass(frozen=True)
class TieRule:
    """What one tie convention means for the kernels (see the module docstring).

    Attributes
    ----------
    mode : TieMode
        The convention's name, as given in the options.
    noised : bool
        Ranks (and ``top_alpha="exactly_k"``) come from float32-noised values ``x + 1e-7·U`` ordered by a stable
        sort; the noise is seeded, so the seed enters the units' shared features.
    binary_closed_forms : bool
        0/1 concepts are scored by the closed forms of their average ranks (no sort, no noise).
    covariance_factor : bool
        Pearson and Spearman are multiplied by ``(m − 1)/m`` (m inputs: the authors' biased covariance).
    degenerate_auc : float
        AUC of a label with no positive or no negative input: 0.5 (no information) or the authors' 0.
    binary_units_sample : bool
        A unit whose activations are all 0 or 1 takes the authors' binary top-and-random sample.
    """

    mode: TieMode
    noised: bool
    binary_closed_forms: bool
    covariance_factor: bool
    degenerate_auc: float
    binary_units_sample: bool

    def ranks(self, be: Backend, values: Any) -> Any:
        """Ranks 1…n along the last axis: average ranks of ``values``, or, when :attr:`noised`, stable ranks of
        ``values`` that are already the noised ones."""
        return stable_ranks(be, values) if self.noised else average_ranks(be, values)

    def pearson_factor(self, size: int | Any) -> Any:
        """``(size − 1)/size`` with :attr:`covariance_factor`, else 1."""
        return (size - 1.0) / size if self.covariance_factor else 1.0


_RULES: dict[str, TieRule] = {
    "average": TieRule("average", noised=False, binary_closed_forms=True, covariance_factor=False,
                       degenerate_auc=0.5, binary_units_sample=False),
    "reference": TieRule("reference", noised=True, binary_closed_forms=False, covariance_factor=True,
                         degenerate_auc=0.0, binary_units_sample=True),
}


def tie_rule(mode: TieMode) -> TieRule:
    """The :class:`TieRule` of ``mode``; ``ValueError`` naming the choices for any other value."""
    try:
        return _RULES[mode]
    except (KeyError, TypeError):
        raise ValueError(f"ties must be one of {list(TIES)}, got {mode!r}") from None

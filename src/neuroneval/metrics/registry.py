"""The metric registry: one :class:`MetricSpec` per metric of paper 000 (App. A, Tables A.1–A.2).

Tables, sanity tests, normalizations and the tests of this package read the facts about a metric (value
range, direction, parameters, kind, framing) from here instead of restating them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

COMBINATION_PREFIX = "hmean:"

#: Parameters every metric accepts (they change how, not what, is computed).
COMMON_PARAMS = ("ties", "seed", "device", "chunk_size", "memory_budget")

#: Default value of every parameter (see ``help(neuroneval.metrics.score)``).
DEFAULTS: Mapping[str, object] = MappingProxyType({
    "alpha": 0.005,
    "lam": 1.0,
    "tr_top_fraction": 0.002,
    "tr_n_top": 25,
    "tr_n_random": 25,
    "top_alpha": "at_least_kth",
    "ties": "average",
    "seed": 0,
    "device": None,
    "chunk_size": None,
    "memory_budget": "auto",
})

_TR_PARAMS = ("tr_top_fraction", "tr_n_top", "tr_n_random")
#: Parameters of the metrics that binarize activations by top-α (000 Eq. A.1; see neuroneval.metrics.binarize).
_TOP = ("alpha", "top_alpha")


@dataclass(frozen=True)
class MetricSpec:
    """Facts about one metric.

    Attributes
    ----------
    name
        Registry key, e.g. ``"auprc"`` or ``"hmean:auc+inverse_auc"``.
    kind
        ``"binary"`` (confusion counts of ``B(a)`` and ``B(c)``), ``"rank"`` (AUC, AUPRC, Spearman),
        ``"continuous"`` (correlation, cosine, WPMI, MAD), ``"sampled"`` (top-and-random) or
        ``"combination"`` (harmonic mean of other metrics, App. E.6).
    value_range
        ``(low, high)`` of the score; ``±inf`` where unbounded.
    higher_is_better
        Whether a better explanation gets a larger score (true for all metrics of paper 000).
    params
        Metric-specific parameters accepted besides the common ones (``ties``, ``seed``, ``device``,
        ``chunk_size``, ``memory_budget``).
    framing
        ``"simulation"`` (the binarized neuron is the label), ``"classification"`` (the binarized concept is
        the label) or ``"symmetric"``.
    inverse
        Name of the metric with the two roles swapped, where one exists.
    affine_invariant
        Whether ``s(u·a + v, c)`` equals ``s(a, c)`` for every ``u > 0`` and real ``v`` (activations only).
    formula
        The definition, in words and symbols, with its source in paper 000.
    components
        For combinations: the metrics whose harmonic mean is taken.
    """

    name: str
    kind: str
    value_range: tuple[float, float]
    higher_is_better: bool
    params: tuple[str, ...]
    framing: str
    formula: str
    inverse: str | None = None
    affine_invariant: bool = True
    components: tuple[str, ...] = field(default=())

    @property
    def uses_alpha(self) -> bool:
        return "alpha" in self.params

    @property
    def uses_lam(self) -> bool:
        return "lam" in self.params


def _spec(name: str, kind: str, value_range: tuple[float, float], params: tuple[str, ...], framing: str,
          formula: str, **extra: object) -> MetricSpec:
    return MetricSpec(name=name, kind=kind, value_range=value_range, higher_is_better=True, params=params,
                      framing=framing, formula=formula, **extra)  # type: ignore[arg-type]


_UNIT = (0.0, 1.0)
_SIGNED = (-1.0, 1.0)
_REAL = (-math.inf, math.inf)

_SPECS = (
    _spec("recall", "binary", _UNIT, _TOP, "simulation",
          "TP / (TP + FN) = B(a)·B(c) / |B(a)|  (000 Eq. 4, Table A.1)", inverse="precision"),
    _spec("precision", "binary", _UNIT, _TOP, "simulation",
          "TP / (TP + FP) = B(a)·B(c) / |B(c)|  (000 Eq. 8, Table A.1)", inverse="recall"),
    _spec("f1", "binary", _UNIT, _TOP, "symmetric",
          "2TP / (2TP + FP + FN) = 2·B(a)·B(c) / (|B(a)| + |B(c)|)  (000 Eq. A.4)"),
    _spec("iou", "binary", _UNIT, _TOP, "symmetric",
          "TP / (TP + FP + FN)  (000 Eq. 5, A.13)"),
    _spec("accuracy", "binary", _UNIT, _TOP, "symmetric",
          "(TP + TN) / n  (000 Eq. A.3)"),
    _spec("balanced_accuracy", "binary", _UNIT, _TOP, "simulation",
          "TP / (2|B(a)|) + TN / (2(n − |B(a)|))  (000 Eq. A.5)", inverse="inverse_balanced_accuracy"),
    _spec("inverse_balanced_accuracy", "binary", _UNIT, _TOP, "classification",
          "TP / (2|B(c)|) + TN / (2(n − |B(c)|))  (000 Eq. A.6)", inverse="balanced_accuracy"),
    _spec("auc", "rank", _UNIT, _TOP, "simulation",
          "Mann–Whitney AUC of the score c against the label B(a), ties count ½  (000 Eq. A.7)",
          inverse="inverse_auc"),
    _spec("inverse_auc", "rank", _UNIT, (), "classification",
          "Mann–Whitney AUC of the score a against the label B(c), ties count ½  (000 Eq. A.8)",
          inverse="auc"),
    _spec("correlation", "continuous", _SIGNED, (), "symmetric",
          "Pearson: Σ(a − ā)(c − c̄) / √(Σ(a − ā)² Σ(c − c̄)²)  (000 Eq. 6, Table A.2)"),
    _spec("correlation_tr", "sampled", _SIGNED, _TR_PARAMS, "symmetric",
          "Pearson on a top-and-random sample of each unit's inputs  (000 Sec. 4.3, Bills et al. 2023)"),
    _spec("spearman", "rank", _SIGNED, (), "symmetric",
          "Pearson of the ranks R(a), R(c)  (000 Eq. A.9)"),
    _spec("spearman_tr", "sampled", _SIGNED, _TR_PARAMS, "symmetric",
          "Spearman on a top-and-random sample of each unit's inputs  (000 Sec. 4.3, Bricken et al. 2023)"),
    _spec("cosine", "continuous", _SIGNED, (), "symmetric",
          "a·c / (‖a‖₂ ‖c‖₂)  (000 Eq. A.10)", affine_invariant=False),
    _spec("wpmi", "continuous", _REAL, (*_TOP, "lam"), "simulation",
          "mean over B(a) of log max(c, 1e-8) − λ·log mean(c)  (000 Eq. A.11, mean instead of sum)"),
    _spec("mad", "continuous", _REAL, (), "classification",
          "mean of a over B(c) − mean of a over not B(c)  (000 Eq. 7, Table A.2)", affine_invariant=False),
    _spec("auprc", "rank", _UNIT, _TOP, "simulation",
          "step-wise average precision of the score c against the label B(a)  (000 App. A.3 item 10)",
          inverse="inverse_auprc"),
    _spec("inverse_auprc", "rank", _UNIT, (), "classification",
          "step-wise average precision of the score a against the label B(c)  (000 App. A.3 item 11)",
          inverse="auprc"),
)

#: The 18 metrics of paper 000, by name (read-only).
METRICS: Mapping[str, MetricSpec] = MappingProxyType({spec.name: spec for spec in _SPECS})


def combination_spec(name: str) -> MetricSpec:
    """Spec of ``"hmean:m1+m2+…"``, the harmonic mean of two or more registered metrics (000 App. E.6)."""
    body = name[len(COMBINATION_PREFIX):]
    components = tuple(part.strip() for part in body.split("+"))
    unknown = [part for part in components if part not in METRICS]
    if len(components) < 2 or unknown:
        raise ValueError(f"a combination is written 'hmean:<metric>+<metric>[+…]' with registered metrics; "
                         f"got {name!r} (unknown: {unknown or 'none'}; known: {', '.join(METRICS)})")
    params = tuple(dict.fromkeys(param for part in components for param in METRICS[part].params))
    high = max(METRICS[part].value_range[1] for part in components)
    return MetricSpec(
        name=COMBINATION_PREFIX + "+".join(components), kind="combination", value_range=(0.0, high),
        higher_is_better=True, params=params, framing="combination",
        formula=f"harmonic mean of {', '.join(components)}; 0 where any of them is ≤ 0  (000 Eq. E.2)",
        affine_invariant=all(METRICS[part].affine_invariant for part in components), components=components,
    )


def get_spec(metric: str) -> MetricSpec:
    """The spec of a registered metric or of an ``hmean:`` combination; ``ValueError`` names the choices."""
    if not isinstance(metric, str):
        raise TypeError(f"metric must be a string, got {type(metric).__name__}")
    if metric.startswith(COMBINATION_PREFIX):
        return combination_spec(metric)
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; expected one of {', '.join(METRICS)} "
                         f"or a combination 'hmean:<metric>+<metric>'")
    return METRICS[metric]

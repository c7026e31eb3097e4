"""The registry of metrics: the one home of each metric's facts (:class:`MetricSpec`).

:data:`METRICS` holds the 18 metrics of paper 000 (App. A), each with its kind, value range, direction, framing,
typed options class (:mod:`neuroneval.metrics.metric_options`), formula with its paper equation, batched kernel
(``kernel(ctx, chunk, pairing)``, :mod:`neuroneval.metrics.context`) and the name of its obvious per-pair reference
(:mod:`neuroneval.metrics.reference`, the tests' independent oracle). Every kernel and reference repeats its
formula and equation in its docstring (``tests/metrics/test_registry_docstrings.py`` checks it).

:func:`get_spec` also serves the harmonic-mean combinations ``"hmean:m1+m2"`` (000 App. E.6, :func:`combination_spec`)
and your own metrics (``package.module:function`` or an entry point, :func:`user_metric_spec`). The engine, the
tables, the sanity tests and the normalizations read these facts instead of restating them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from neuroneval.metrics import (
    confusion,
    correlation,
    input_products,
    rank_products,
    ranking,
    topandrandom,
    wpmi_mad,
)
from neuroneval.metrics.metric_options import (
    COMMON_PARAMS,
    DEFAULTS,
    MetricOptions,
    TopAlphaOptions,
    TopAndRandomOptions,
    WpmiOptions,
    convert_options,
    metric_params,
    options_class_for,
    options_from_params,
    restrict_options,
)

__all__ = ["COMBINATION_PREFIX", "COMMON_PARAMS", "DEFAULTS", "METRICS", "Kernel", "MetricSpec", "combination_spec",
           "get_spec"]

COMBINATION_PREFIX = "hmean:"

#: A batched kernel: ``kernel(ctx, chunk, pairing)`` scores a block of units against a chunk of concepts
#: (:mod:`neuroneval.metrics.context`), for all pairs or the listed ones.
Kernel = Callable[..., Any]


@dataclass(frozen=True)
class MetricSpec:
    """Everything about one metric, in one place: its facts, its batched kernel, its per-pair reference and its
    typed options.

    Attributes
    ----------
    name
        Registry key, e.g. ``"auprc"`` or ``"hmean:auc+inverse_auc"``.
    kind
        ``"binary"`` (confusion counts of ``B(a)`` and ``B(c)``), ``"rank"`` (AUC, AUPRC, Spearman),
        ``"continuous"`` (correlation, cosine, WPMI, MAD), ``"sampled"`` (top-and-random),
        ``"combination"`` (harmonic mean of other metrics, App. E.6) or ``"user"`` (your own,
        :mod:`neuroneval.metrics.user`).
    value_range
        ``(low, high)`` of the score; ``±inf`` where unbounded.
    higher_is_better
        Whether a better explanation gets a larger score (true for all metrics of paper 000).
    options
        The metric's frozen options class (:mod:`neuroneval.metrics.metric_options`): the common options
        (``ties``, ``seed``, ``device``, ``chunk_size``, ``memory_budget``) plus its hyper-parameters, with their
        defaults and validation.
    framing
        ``"simulation"`` (the binarized neuron is the label), ``"classification"`` (the binarized concept is
        the label) or ``"symmetric"``.
    formula
        The definition, in words and symbols, with its source in paper 000.
    kernel
        The batched kernel (every (unit, concept) pair of a block at once; ``None`` for a combination, whose
        parts are scored by theirs).
    reference
        Name of the obvious per-pair implementation in :mod:`neuroneval.metrics.reference` (an independent
        oracle; :func:`neuroneval.metrics.reference.per_pair` returns it): ``reference(a, c, **hyper-parameters)``;
        for a sampled metric ``reference(a, c, sample)``, given the sample
        (:func:`~neuroneval.metrics.reference.top_and_random_sample`); ``None`` for a combination. A name, not
        the function, so that the workflow, which imports the registry, never imports the oracle: a change to it
        reruns no rule.
    inverse
        Name of the metric with the two roles swapped, where one exists.
    affine_invariant
        Whether ``s(u·a + v, c)`` equals ``s(a, c)`` for every ``u > 0`` and real ``v`` (activations only).
    components
        For combinations: the metrics whose harmonic mean is taken.
    whole_pass
        Optional: every (unit, concept) pair of an all-pairs call by passes over the inputs,
        ``whole_pass(activations, concepts, unit_rows, params, backend_name, notes, update)`` → (K', C) scores, or
        ``None`` where it does not apply (the engine then cuts unit blocks and concept chunks for :attr:`kernel`);
        Spearman's (:func:`neuroneval.metrics.rank_products.spearman_all_pairs`), correlation's and cosine's
        (:mod:`neuroneval.metrics.input_products`).
    linear_in_lam
        Whether the score is linear in λ with a slope free of α, ``s(α, λ) = s(α, 0) − λ·(s(α₀, 0) − s(α₀, 1))``
        for any α₀: WPMI's, whose slope is ``log mean(c_t)`` (000 Eq. A.11). The α/λ search then scores the λ grid
        from λ = 0 at each α plus one λ = 1 call (:func:`neuroneval.meta.search.evaluate_metric`); any other metric
        that takes λ (a user metric) is scored at every grid point.
    """

    name: str
    kind: str
    value_range: tuple[float, float]
    higher_is_better: bool
    options: type[MetricOptions]
    framing: str
    formula: str
    kernel: Kernel | None = None
    reference: str | None = None
    inverse: str | None = None
    affine_invariant: bool = True
    components: tuple[str, ...] = field(default=())
    whole_pass: Callable[..., np.ndarray | None] | None = None
    linear_in_lam: bool = False

    @property
    def params(self) -> tuple[str, ...]:
        """The metric's hyper-parameters: the fields its options add to the common ones (e.g. ``alpha``)."""
        return metric_params(self.options)

    @property
    def uses_alpha(self) -> bool:
        return "alpha" in self.params

    @property
    def uses_lam(self) -> bool:
        return "lam" in self.params

    @property
    def is_sampled(self) -> bool:
        """Whether the metric scores a top-and-random sample of each unit's inputs."""
        return self.kind == "sampled"

    def make_options(self, options: MetricOptions | None = None, params: Mapping[str, Any] | None = None
                     ) -> MetricOptions:
        """This metric's options from a :class:`MetricOptions` (any class whose non-default fields the metric
        takes) or from keyword parameters (the documented convenience of ``score(…, alpha=0.01)``), not both.

        ``TypeError`` names a parameter no metric has; ``ValueError`` one this metric does not take, or a value
        out of range.
        """
        if options is not None and params:
            raise TypeError(f"metric {self.name!r}: pass options= or keyword parameters "
                            f"{sorted(params)}, not both")
        if options is not None:
            return convert_options(self.name, self.options, options)
        return options_from_params(self.name, self.options, params or {})

    def options_from(self, shared: MetricOptions) -> MetricOptions:
        """This metric's options from options shared by several metrics: the fields it takes, the others ignored
        (e.g. one :class:`~neuroneval.metrics.metric_options.TopAlphaOptions` for a table of metrics, α going to
        those that binarize)."""
        return restrict_options(self.options, shared)


def _spec(name: str, kind: str, value_range: tuple[float, float], options: type[MetricOptions], framing: str,
          formula: str, kernel: Kernel, reference_name: str, **extra: object) -> MetricSpec:
    return MetricSpec(name=name, kind=kind, value_range=value_range, higher_is_better=True, options=options,
                      framing=framing, formula=formula, kernel=kernel, reference=reference_name,
                      **extra)  # type: ignore[arg-type]


_UNIT = (0.0, 1.0)
_SIGNED = (-1.0, 1.0)
_REAL = (-math.inf, math.inf)

_SPECS = (
    _spec("recall", "binary", _UNIT, TopAlphaOptions, "simulation",
          "TP / (TP + FN) = B(a)·B(c) / |B(a)|  (000 Eq. 4, Table A.1)",
          confusion.recall, "recall", inverse="precision"),
    _spec("precision", "binary", _UNIT, TopAlphaOptions, "simulation",
          "TP / (TP + FP) = B(a)·B(c) / |B(c)|  (000 Eq. 8, Table A.1)",
          confusion.precision, "precision", inverse="recall"),
    _spec("f1", "binary", _UNIT, TopAlphaOptions, "symmetric",
          "2TP / (2TP + FP + FN) = 2·B(a)·B(c) / (|B(a)| + |B(c)|)  (000 Eq. A.4)",
          confusion.f1, "f1"),
    _spec("iou", "binary", _UNIT, TopAlphaOptions, "symmetric",
          "TP / (TP + FP + FN)  (000 Eq. 5, A.13)",
          confusion.iou, "iou"),
    _spec("accuracy", "binary", _UNIT, TopAlphaOptions, "symmetric",
          "(TP + TN) / n  (000 Eq. A.3)",
          confusion.accuracy, "accuracy"),
    _spec("balanced_accuracy", "binary", _UNIT, TopAlphaOptions, "simulation",
          "TP / (2|B(a)|) + TN / (2(n − |B(a)|))  (000 Eq. A.5)",
          confusion.balanced_accuracy, "balanced_accuracy", inverse="inverse_balanced_accuracy"),
    _spec("inverse_balanced_accuracy", "binary", _UNIT, TopAlphaOptions, "classification",
          "TP / (2|B(c)|) + TN / (2(n − |B(c)|))  (000 Eq. A.6)",
          confusion.inverse_balanced_accuracy, "inverse_balanced_accuracy", inverse="balanced_accuracy"),
    _spec("auc", "rank", _UNIT, TopAlphaOptions, "simulation",
          "Mann–Whitney AUC of the score c against the label B(a), ties count ½  (000 Eq. A.7)",
          ranking.auc, "auc", inverse="inverse_auc"),
    _spec("inverse_auc", "rank", _UNIT, MetricOptions, "classification",
          "Mann–Whitney AUC of the score a against the label B(c), ties count ½  (000 Eq. A.8)",
          ranking.inverse_auc, "inverse_auc", inverse="auc"),
    _spec("correlation", "continuous", _SIGNED, MetricOptions, "symmetric",
          "Pearson: Σ(a − ā)(c − c̄) / √(Σ(a − ā)² Σ(c − c̄)²)  (000 Eq. 6, Table A.2)",
          correlation.correlation, "correlation", whole_pass=input_products.correlation_all_pairs),
    _spec("correlation_tr", "sampled", _SIGNED, TopAndRandomOptions, "symmetric",
          "Pearson on a top-and-random sample of each unit's inputs  (000 Sec. 4.3, Bills et al. 2023)",
          topandrandom.correlation_tr, "correlation_on"),
    _spec("spearman", "rank", _SIGNED, MetricOptions, "symmetric",
          "Pearson of the ranks R(a), R(c)  (000 Eq. A.9)",
          correlation.spearman, "spearman", whole_pass=rank_products.spearman_all_pairs),
    _spec("spearman_tr", "sampled", _SIGNED, TopAndRandomOptions, "symmetric",
          "Spearman on a top-and-random sample of each unit's inputs  (000 Sec. 4.3, Bricken et al. 2023)",
          topandrandom.spearman_tr, "spearman_on"),
    _spec("cosine", "continuous", _SIGNED, MetricOptions, "symmetric",
          "a·c / (‖a‖₂ ‖c‖₂)  (000 Eq. A.10)",
          correlation.cosine, "cosine", affine_invariant=False, whole_pass=input_products.cosine_all_pairs),
    _spec("wpmi", "continuous", _REAL, WpmiOptions, "simulation",
          "mean over B(a) of log max(c, 1e-8) − λ·log mean(c)  (000 Eq. A.11, mean instead of sum)",
          wpmi_mad.wpmi, "wpmi", linear_in_lam=True),
    _spec("mad", "continuous", _REAL, MetricOptions, "classification",
          "mean of a over B(c) − mean of a over not B(c)  (000 Eq. 7, Table A.2)",
          wpmi_mad.mad, "mad", affine_invariant=False),
    _spec("auprc", "rank", _UNIT, TopAlphaOptions, "simulation",
          "step-wise average precision of the score c against the label B(a)  (000 App. A.3 item 10)",
          ranking.auprc, "auprc", inverse="inverse_auprc"),
    _spec("inverse_auprc", "rank", _UNIT, MetricOptions, "classification",
          "step-wise average precision of the score a against the label B(c)  (000 App. A.3 item 11)",
          ranking.inverse_auprc, "inverse_auprc", inverse="auprc"),
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
        higher_is_better=True, options=options_class_for(params), framing="combination",
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
        user = user_metric_spec(metric)
        if user is None:
            raise ValueError(f"unknown metric {metric!r}; expected one of {', '.join(METRICS)}, a combination "
                             f"'hmean:<metric>+<metric>', or your own 'package.module:function' (or an entry point "
                             f"of the group 'neuroneval.metrics'; docs/your_metric.md)")
        return user
    return METRICS[metric]


def user_metric_spec(metric: str) -> MetricSpec | None:
    """The spec of a user metric (``package.module:function`` or an entry point of ``neuroneval.metrics``,
    :mod:`neuroneval.metrics.user`): its declared facts, its kernel, no per-pair reference; ``None`` if ``metric``
    names none."""
    from neuroneval.metrics.user import resolve_user_metric

    resolved = resolve_user_metric(metric)
    if resolved is None:
        return None
    facts, kernel = resolved
    return MetricSpec(name=metric, kind="user", value_range=facts.value_range, higher_is_better=facts.higher_is_better,
                      options=facts.options, framing="user",
                      formula=facts.formula or f"your metric {metric}", kernel=kernel, affine_invariant=False)

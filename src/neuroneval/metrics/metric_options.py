"""Typed options of the metrics: one frozen :class:`~neuroneval.options.Options` class per set of parameters.

Every metric takes the computation options of :class:`MetricOptions` (``ties``, ``seed``, ``device``,
``chunk_size``, ``memory_budget``); the registry (:mod:`neuroneval.metrics.registry`) names, for each metric, the
subclass that adds its hyper-parameters:

* :class:`TopAlphaOptions` — ``alpha`` and ``top_alpha`` of the top-α binarization ``B(a) = 1[a ≥ k-th largest]``,
  ``k = ⌈α·n⌉`` (000 Eq. A.1): the binary metrics, AUC, AUPRC;
* :class:`WpmiOptions` — adds ``lam``, the λ of WPMI (000 Eq. A.11);
* :class:`TopAndRandomOptions` — ``tr_top_fraction``, ``tr_n_top``, ``tr_n_random`` of the top-and-random samples
  (000 Sec. 4.3);
* :class:`TopAlphaAndRandomOptions`, :class:`WpmiAndRandomOptions` — the unions a harmonic-mean combination of
  such metrics takes (000 App. E.6).

The defaults are paper 000's (see ``help(neuroneval.metrics.score)``); :meth:`MetricOptions.validate` checks every
value and names the field. :func:`options_from_params` turns keyword parameters into the options of one metric,
naming a parameter no metric has (``TypeError``) and one this metric does not take (``ValueError``).
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from neuroneval.metrics.binarize import AT_LEAST_KTH, TOP_ALPHA_RULES, TopAlphaRule
from neuroneval.metrics.budget import check_setting
from neuroneval.metrics.context import Params
from neuroneval.metrics.ties import TIES, TieMode
from neuroneval.options import Options, OptionsError, check_choice


def _number(owner: Options, name: str, low: float, *, low_open: bool, high: float | None = None,
            integer: bool = False) -> None:
    """Check ``owner.<name>`` (a real, or an integer; numpy scalars too, never a bool) and store it as a plain
    ``float``/``int`` so that equal options compare and hash equal."""
    value = getattr(owner, name)
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind) or value != value or abs(value) == float("inf"):
        expected = "an integer" if integer else "a finite real number"
        raise OptionsError(f"{type(owner).__name__}.{name} must be {expected}, got {value!r}")
    above = value > low if low_open else value >= low
    if not above or (high is not None and value > high):
        interval = f"{'(' if low_open else '['}{low}, {'inf)' if high is None else f'{high}]'}"
        raise OptionsError(f"{type(owner).__name__}.{name} must lie in {interval}, got {value!r}")
    object.__setattr__(owner, name, int(value) if integer else float(value))


@dataclasses.dataclass(frozen=True)
class MetricOptions(Options):
    """Options every metric takes; they change how, not what, is computed (except ``ties``, which picks the
    convention, and ``seed``, which picks the random samples).

    Attributes
    ----------
    ties : {"average", "reference"}
        Tie convention (:data:`neuroneval.metrics.ties.TieMode`; ``help(neuroneval.metrics.score)``), resolved once
        per call into a :class:`~neuroneval.metrics.ties.TieRule` that the kernels read.
    seed : int ≥ 0
        Seeds the top-and-random samples and the reference-mode noise.
    device : None or torch device
        ``None``: numpy; otherwise torch on that device.
    chunk_size : int ≥ 1 or None
        Concepts per chunk (pairs per group for ``score_pairs``); ``None``: from ``memory_budget``.
    memory_budget : int ≥ 16 MiB or {"auto", "unbounded"}
        Working memory of a call beyond its inputs (:mod:`neuroneval.metrics.budget`).
    """

    ties: TieMode = "average"
    seed: int = 0
    device: Any = None
    chunk_size: int | None = None
    memory_budget: int | str = "auto"

    def validate(self) -> None:
        check_choice(self, "ties", TIES)
        _number(self, "seed", 0, low_open=False, integer=True)
        if self.chunk_size is not None:
            _number(self, "chunk_size", 1, low_open=False, integer=True)
        try:
            object.__setattr__(self, "memory_budget", check_setting(self.memory_budget))
        except ValueError as error:
            raise OptionsError(f"{type(self).__name__}.{error}") from None


@dataclasses.dataclass(frozen=True)
class TopAlphaOptions(MetricOptions):
    """:class:`MetricOptions` and the top-α binarization of activations (000 Eq. A.1).

    Attributes
    ----------
    alpha : float in (0, 1]
        ``k = ⌈α·n⌉`` inputs are active; 0.005 is paper 000's fixed value for hidden layers (App. F).
    top_alpha : {"at_least_kth", "exactly_k"}
        The rule at ties (:mod:`neuroneval.metrics.binarize`).
    """

    alpha: float = 0.005
    top_alpha: TopAlphaRule = AT_LEAST_KTH

    def validate(self) -> None:
        super().validate()
        _number(self, "alpha", 0.0, low_open=True, high=1.0)
        check_choice(self, "top_alpha", TOP_ALPHA_RULES)


@dataclasses.dataclass(frozen=True)
class WpmiOptions(TopAlphaOptions):
    """:class:`TopAlphaOptions` and ``lam``, the λ of WPMI: mean over B(a) of log c − λ·log mean(c) (000 Eq. A.11);
    λ = 1 gives a pointwise mutual information."""

    lam: float = 1.0

    def validate(self) -> None:
        super().validate()
        _number(self, "lam", float("-inf"), low_open=True)


@dataclasses.dataclass(frozen=True)
class TopAndRandomOptions(MetricOptions):
    """:class:`MetricOptions` and the top-and-random sample of each unit (000 Sec. 4.3): ``tr_n_top`` inputs from
    its ``⌈tr_top_fraction·n⌉`` largest activations and ``tr_n_random`` uniform others (at least 2 in all)."""

    tr_top_fraction: float = 0.002
    tr_n_top: int = 25
    tr_n_random: int = 25

    def validate(self) -> None:
        super().validate()
        _number(self, "tr_top_fraction", 0.0, low_open=True, high=1.0)
        _number(self, "tr_n_top", 0, low_open=False, integer=True)
        _number(self, "tr_n_random", 0, low_open=False, integer=True)
        if self.tr_n_top + self.tr_n_random < 2:
            raise OptionsError(f"a top-and-random sample needs at least 2 inputs, got tr_n_top={self.tr_n_top} and "
                               f"tr_n_random={self.tr_n_random}")


@dataclasses.dataclass(frozen=True)
class TopAlphaAndRandomOptions(TopAlphaOptions, TopAndRandomOptions):
    """Union of :class:`TopAlphaOptions` and :class:`TopAndRandomOptions` (combinations of such metrics)."""


@dataclasses.dataclass(frozen=True)
class WpmiAndRandomOptions(WpmiOptions, TopAndRandomOptions):
    """Union of :class:`WpmiOptions` and :class:`TopAndRandomOptions` (combinations of such metrics); every
    parameter of every metric."""


OPTION_CLASSES: tuple[type[MetricOptions], ...] = (MetricOptions, TopAlphaOptions, WpmiOptions, TopAndRandomOptions,
                                                   TopAlphaAndRandomOptions, WpmiAndRandomOptions)

#: Parameters every metric accepts, in field order.
COMMON_PARAMS: tuple[str, ...] = tuple(field.name for field in dataclasses.fields(MetricOptions))

#: Default value of every parameter of every metric (the fields' defaults).
DEFAULTS: Mapping[str, object] = MappingProxyType({field.name: field.default
                                                  for field in dataclasses.fields(WpmiAndRandomOptions)})


def metric_params(options_class: type[MetricOptions]) -> tuple[str, ...]:
    """The parameters an options class adds to :data:`COMMON_PARAMS`, in field order."""
    return tuple(field.name for field in dataclasses.fields(options_class) if field.name not in COMMON_PARAMS)


def options_class_for(params: tuple[str, ...]) -> type[MetricOptions]:
    """The options class whose metric-specific parameters are exactly ``params`` (a combination's union)."""
    for options_class in OPTION_CLASSES:
        if set(metric_params(options_class)) == set(params):
            return options_class
    raise ValueError(f"no options class takes exactly {sorted(params)}")


def options_from_params(metric: str, options_class: type[MetricOptions], params: Mapping[str, Any]) -> MetricOptions:
    """``options_class`` from keyword parameters: ``TypeError`` names a parameter no metric has, ``ValueError``
    one that ``metric`` does not take, :class:`~neuroneval.options.OptionsError` a value out of range."""
    unknown = sorted(set(params) - set(DEFAULTS))
    if unknown:
        raise TypeError(f"unknown parameter(s) {unknown} for metric {metric!r}; parameters are {', '.join(DEFAULTS)}")
    accepted = [field.name for field in dataclasses.fields(options_class)]
    unused = sorted(set(params) - set(accepted))
    if unused:
        raise OptionsError(f"metric {metric!r} takes no parameter(s) {unused}; it accepts "
                           f"{', '.join(sorted(accepted))}")
    return options_class(**params)


def convert_options(metric: str, options_class: type[MetricOptions], options: MetricOptions) -> MetricOptions:
    """``options`` as an ``options_class`` (the metric's own class); the fields it sets must all be ones the metric
    takes, where they differ from the defaults (``ValueError`` names the others)."""
    if type(options) is options_class:
        return options
    if not isinstance(options, MetricOptions):
        raise TypeError(f"options of metric {metric!r} must be a MetricOptions, got {type(options).__name__}")
    accepted = {field.name for field in dataclasses.fields(options_class)}
    values = {field.name: getattr(options, field.name) for field in dataclasses.fields(options)}
    extra = sorted(name for name, value in values.items() if name not in accepted and value != DEFAULTS[name])
    if extra:
        raise OptionsError(f"metric {metric!r} takes no parameter(s) {extra} (set in the {type(options).__name__} "
                           f"given); it accepts {', '.join(sorted(accepted))}")
    return options_class(**{name: value for name, value in values.items() if name in accepted})


def with_point(metric: str, options: MetricOptions, point: Mapping[str, Any]) -> MetricOptions:
    """``options`` with the values of one grid point (``alpha``/``lam``) replaced; ``ValueError`` names a parameter
    the metric does not take."""
    return options_from_params(metric, type(options), {**_values(options), **point})


def restrict_options(options_class: type[MetricOptions], options: MetricOptions) -> MetricOptions:
    """The fields of ``options`` that ``options_class`` has, as an ``options_class`` (the part of a combination
    gets its own parameters; the others are ignored)."""
    names = {field.name for field in dataclasses.fields(options_class)}
    return options_class(**{name: value for name, value in _values(options).items() if name in names})


def _values(options: MetricOptions) -> dict[str, Any]:
    return {field.name: getattr(options, field.name) for field in dataclasses.fields(options)}


def engine_params(options: MetricOptions) -> tuple[Params, Any]:
    """The engine's resolved :class:`~neuroneval.metrics.context.Params` (defaults for the parameters the metric
    does not take) and the device."""
    values = {**DEFAULTS, **_values(options)}
    device = values.pop("device")
    return Params(**values), device

"""Typed options of the sanity tests: the ``sanity:`` block of ``params.yaml``, parsed once (000 Sec. 4, App. C–F).

:class:`SanityOptions` holds the block with one nested frozen class per sub-block; the workflow validates the block
against the schema first, these checks are what a library user who builds the options in Python gets. Lists
become tuples, so the options are hashable and cannot change on the way.
"""

from __future__ import annotations

import dataclasses
import math
import numbers

from neuroneval.metrics.ties import TIES, TieMode
from neuroneval.options import Options, OptionsError, check_choice, check_fraction, check_range, check_text
from neuroneval.sanity.perturb import SUBCLASS_RULES, SubclassRule


def _check_each(owner: Options, name: str, low: float, high: float | None = None, *, low_open: bool = False,
                integer: bool = False) -> None:
    """:class:`OptionsError` unless ``owner.<name>`` is a non-empty tuple of numbers (integers if ``integer``) in
    ``[low, high]`` (``(low, high]`` if ``low_open``; no upper bound if ``high`` is None)."""
    values = getattr(owner, name)
    kind = numbers.Integral if integer else numbers.Real
    for value in values if isinstance(values, tuple) and values else [None]:
        fits = isinstance(value, kind) and not isinstance(value, bool) and math.isfinite(value) \
            and (value > low if low_open else value >= low) and (high is None or value <= high)
        if not fits:
            interval = f"{'(' if low_open else '['}{low}, {'inf)' if high is None else f'{high}]'}"
            raise OptionsError(f"{type(owner).__name__}.{name} must be a non-empty list of "
                               f"{'integers' if integer else 'numbers'} in {interval}, got {values!r}")


def _check_names(owner: Options, name: str) -> None:
    values = getattr(owner, name)
    if not isinstance(values, tuple) or not all(isinstance(value, str) and value for value in values):
        raise OptionsError(f"{type(owner).__name__}.{name} must be a list of names, got {values!r}")


@dataclasses.dataclass(frozen=True)
class ExperimentalOptions(Options):
    """``sanity.experimental``: ``draws`` c±-samples per unit, averaged into its Δs (000 Eq. 10; paper: 1)."""

    draws: int = 1

    def validate(self) -> None:
        check_range(self, "draws", 1, integer=True)


@dataclasses.dataclass(frozen=True)
class TheoreticalOptions(Options):
    """``sanity.theoretical``: ideal binary units ``a = c`` at activation frequencies γ (000 App. C).

    ``gammas`` in (0, 1), ``n`` inputs per unit, ``draws`` c±-draws per γ and test, ``lam`` the WPMI λ, ``device``
    the metric engine's device (``None``: numpy).
    """

    gammas: tuple[float, ...] = (0.499, 0.1, 0.01, 0.001, 0.0001)
    n: int = 50_000
    draws: int = 100
    lam: float = 1.0
    device: str | None = None

    def validate(self) -> None:
        _check_each(self, "gammas", 0.0, 1.0, low_open=True)
        check_range(self, "n", 2, integer=True)
        check_range(self, "draws", 1, integer=True)
        check_range(self, "lam", 0.0)
        check_text(self, "device", optional=True)


@dataclasses.dataclass(frozen=True)
class ReferenceCheckOptions(Options):
    """``sanity.reference_check``: reference-mode theoretical test at the published ``n``, ``draws`` per γ and test,
    once per seed of ``seeds`` (the fidelity report, Tables C.1–C.4)."""

    n: int = 500_000
    draws: int = 20
    seeds: tuple[int, ...] = (0, 1, 2)

    def validate(self) -> None:
        check_range(self, "n", 2, integer=True)
        check_range(self, "draws", 2, integer=True)
        _check_each(self, "seeds", 0, integer=True)


@dataclasses.dataclass(frozen=True)
class CombinationOptions(Options):
    """``sanity.combinations``: the ``hmean:`` metrics of 000 App. E.6, the settings of their experimental test
    (Table E.8) and of their meta-AUPRC (Table E.9)."""

    metrics: tuple[str, ...] = ()
    settings: tuple[str, ...] = ()
    meta_settings: tuple[str, ...] = ()

    def validate(self) -> None:
        for name in ("metrics", "settings", "meta_settings"):
            _check_names(self, name)


@dataclasses.dataclass(frozen=True)
class AblationOptions(Options):
    """``sanity.ablations`` (000 App. E.1, E.3–E.5): r₋ values ``keep``, r₊ values ``multiplier``, ε values
    ``epsilons``, draw counts ``draws`` (one run of the largest), the semantic ``subclass_rule``, on ``setting``."""

    setting: str = ""
    keep: tuple[float, ...] = (0.33, 0.5, 0.75)
    multiplier: tuple[float, ...] = (1.33, 2.0, 3.0)
    epsilons: tuple[float, ...] = (0.0001, 0.001, 0.01)
    draws: tuple[int, ...] = (1, 3, 10)
    subclass_rule: SubclassRule = "largest"

    def validate(self) -> None:
        _check_each(self, "keep", 0.0, 1.0, low_open=True)
        _check_each(self, "multiplier", 1.0)
        _check_each(self, "epsilons", 0.0)
        _check_each(self, "draws", 1, integer=True)
        check_choice(self, "subclass_rule", SUBCLASS_RULES)


@dataclasses.dataclass(frozen=True)
class ShiftOptions(Options):
    """``sanity.shift`` (000 App. E.2): ``constant`` added to every activation of ``setting``."""

    setting: str = ""
    constant: float = 1.0

    def validate(self) -> None:
        check_range(self, "constant")


@dataclasses.dataclass(frozen=True)
class SanityOptions(Options):
    """The ``sanity:`` block: Table 3's ``metrics`` on ``settings``, the tie mode ``ties`` (and both modes for
    ``tie_metrics``), ε of Decrease Acc (000 Eq. 11), the pass threshold of a test (000 Sec. 4.4: 0.9), the seed of
    the c± draws, top-and-random samples and tie noise, and one nested options object per sub-block.

    ``mean_settings``: the settings Table 3's experimental columns average (the paper's eight of 000 App. F.1; the
    others get columns of their own beside the mean; :meth:`averaged_settings`: those that are in ``settings``, or all
    ``settings`` when none is). ``min_alpha_inputs``: the α grid
    a sanity test searches keeps only the α with ``α·n ≥ min_alpha_inputs`` on a setting of ``n`` inputs
    (:func:`~neuroneval.sanity.alpha_scale.alpha_grid_at_scale`; the paper's smallest α, 1e-4 of 50,000 ImageNet
    images, keeps 5)."""

    settings: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    ties: TieMode = "average"
    tie_metrics: tuple[str, ...] = ()
    epsilon: float = 0.001
    pass_threshold: float = 0.9
    seed: int = 0
    mean_settings: tuple[str, ...] = ()
    min_alpha_inputs: int = 1
    experimental: ExperimentalOptions = dataclasses.field(default_factory=ExperimentalOptions)
    theoretical: TheoreticalOptions = dataclasses.field(default_factory=TheoreticalOptions)
    reference_check: ReferenceCheckOptions = dataclasses.field(default_factory=ReferenceCheckOptions)
    combinations: CombinationOptions = dataclasses.field(default_factory=CombinationOptions)
    ablations: AblationOptions = dataclasses.field(default_factory=AblationOptions)
    shift: ShiftOptions = dataclasses.field(default_factory=ShiftOptions)

    def validate(self) -> None:
        for name in ("settings", "metrics", "tie_metrics", "mean_settings"):
            _check_names(self, name)
        check_range(self, "min_alpha_inputs", 1, integer=True)
        check_choice(self, "ties", TIES)
        check_range(self, "epsilon", 0.0, low_open=True)
        check_fraction(self, "pass_threshold", low_open=False)
        check_range(self, "seed", 0, integer=True)

    def averaged_settings(self) -> tuple[str, ...]:
        """The settings Table 3's experimental columns average: those of ``settings`` that ``mean_settings`` names,
        in ``settings`` order; all ``settings`` when it names none of them (an overlay with settings of your own
        averages those). The others are reported beside the mean."""
        named = tuple(name for name in self.settings if name in self.mean_settings)
        return named or self.settings

    def tie_modes(self, metric: str) -> list[str]:
        """``ties``, plus the other mode(s) for the metrics of ``tie_metrics``."""
        return [self.ties, *(mode for mode in TIES if mode != self.ties and metric in self.tie_metrics)]

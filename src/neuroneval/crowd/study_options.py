"""Options of the simulated crowd study (paper 001, Setting 1), parsed once from params and validated.

Three frozen :class:`~neuroneval.options.Options` travel from ``crowd:`` in params.yaml to the library:

- :class:`SimulationOptions` (``crowd.simulation``): which units are studied and the knobs both curves share
  (trials, ε of Eq. 4, ddof of Eq. 5–6, master seed);
- :class:`SamplingOptions` (``crowd.sampling``): the sampling curve of Fig. 2a;
- :class:`AggregationOptions` (``crowd.aggregation``): the aggregation curve of Fig. 3a (App. A.3);
- :class:`CostReductionOptions` (``crowd.summary``): the cost-reduction factors read off the two curves;
- :class:`SimulatedRatersOptions`: the simulated raters' knobs that the rarity study and the explanation-methods
  benchmark share (their options derive from it).

Numbers are normalised on construction (grids become tuples of ``int``, rates ``float``), so a study run from
params and one run from Python literals write the same tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from numbers import Integral

from neuroneval.crowd.aggregation import (
    AGGREGATION_METHODS,
    DEFAULT_PRIOR_CLIP,
    DEFAULT_RATER_ERROR,
    DEFAULT_UNIFORM_PRIOR,
)
from neuroneval.crowd.sampling import DEFAULT_EPSILON, SAMPLING_METHODS, SamplingMethod
from neuroneval.crowd.study_units import DEFAULT_MIN_TRUE_CORRELATION
from neuroneval.options import Options, OptionsError, check_choice, check_range

#: Numbers of labelled inputs of the sampling curve.
DEFAULT_SAMPLE_SIZES = (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
#: Costs (inputs × raters per input) of the aggregation curve.
DEFAULT_COSTS = (20, 50, 100, 200, 500, 1000, 2000, 5000)
#: Raters per input tried at each cost.
DEFAULT_RATER_COUNTS = (1, 2, 3, 5, 9)
#: Trials averaged per point (10 in the paper).
DEFAULT_TRIALS = 10
#: Comparisons of the summary table: (experiment, baseline, method).
DEFAULT_COMPARISONS = (
    ("sampling", "uniform", "pseudo"),
    ("sampling", "uniform", "activation"),
    ("aggregation", "majority", "bayes_pseudo"),
    ("aggregation", "bayes_uniform", "bayes_pseudo"),
    ("aggregation", "majority", "bayes_uniform"),
)


def _set(owner: Options, name: str, value: object) -> None:
    object.__setattr__(owner, name, value)


def _check_grid(owner: Options, name: str) -> None:
    """``owner.<name>`` as a non-empty tuple of positive integers."""
    grid = tuple(getattr(owner, name))
    if not grid or any(isinstance(v, bool) or not isinstance(v, Integral) or v < 1 for v in grid):
        raise OptionsError(f"{type(owner).__name__}.{name} must be a non-empty list of positive integers, "
                           f"got {list(grid)}")
    _set(owner, name, tuple(int(v) for v in grid))


def _check_methods(owner: Options, name: str, allowed: tuple[str, ...]) -> None:
    """``owner.<name>`` as a non-empty tuple of names from ``allowed``."""
    methods = tuple(getattr(owner, name))
    unknown = [method for method in methods if method not in allowed]
    if not methods or unknown:
        raise OptionsError(f"{type(owner).__name__}.{name} must name one or more of {list(allowed)}, "
                           f"got {list(methods)}")
    _set(owner, name, methods)


def _check_rate(owner: Options, name: str) -> None:
    """``owner.<name>`` as a float flip rate in [0, 0.5)."""
    check_range(owner, name, 0.0, 0.5, high_open=True)
    _set(owner, name, float(getattr(owner, name)))


@dataclass(frozen=True)
class SimulatedRatersOptions(Options):
    """The knobs of a simulated crowd of raters that the studies run on given units share (the rarity study,
    :class:`~neuroneval.crowd.rarity.RarityStudyOptions`, and the explanation-methods benchmark,
    :class:`~neuroneval.method_eval.crowd_table3.CrowdBenchmarkOptions`).

    Attributes
    ----------
    rater_error
        η: each rating is flipped with this probability, in [0, 0.5) (the Bayes methods assume the same η).
    uniform_prior
        Prior P(concept) of Bayes with a uniform prior (Method 3a), in (0, 1).
    prior_clip
        Clip range (low, high) of the pseudo-label prior (Method 3b), 0 < low < high < 1.
    n_trials
        Simulated studies averaged per unit (10 in the paper).
    epsilon
        ε > 0 of the sampling distributions (Eq. 4).
    ddof
        Delta degrees of freedom of Eq. 5–6 (0 or 1).
    seed
        Master seed of the draws.

    Values are checked, not converted, so the tables that record them keep what params.yaml wrote.
    """

    rater_error: float = DEFAULT_RATER_ERROR
    uniform_prior: float = DEFAULT_UNIFORM_PRIOR
    prior_clip: tuple[float, float] = DEFAULT_PRIOR_CLIP
    n_trials: int = DEFAULT_TRIALS
    epsilon: float = DEFAULT_EPSILON
    ddof: int = 1
    seed: int = 0

    def validate(self) -> None:
        check_range(self, "rater_error", 0.0, 0.5, high_open=True)
        check_range(self, "uniform_prior", 0.0, 1.0, low_open=True, high_open=True)
        clip = tuple(self.prior_clip)
        if len(clip) != 2 or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in clip) \
                or not 0 < clip[0] < clip[1] < 1:
            raise OptionsError(f"{type(self).__name__}.prior_clip must be [low, high] with 0 < low < high < 1, "
                               f"got {list(clip)}")
        check_range(self, "n_trials", 1, integer=True)
        check_range(self, "epsilon", 0.0, low_open=True)
        check_choice(self, "ddof", (0, 1))
        check_range(self, "seed", 0, integer=True)


@dataclass(frozen=True)
class SimulationOptions(Options):
    """The ``crowd.simulation`` block: which units are studied, and the knobs both curves share.

    Attributes
    ----------
    min_true_correlation
        Units whose best concept correlates less (ρ_gt, Eq. 10) are left out: Eq. 13 divides by ρ_gt.
    max_units
        Study at most this many units (a seed-free subset by unit-id hash); None studies all.
    n_trials
        Simulated studies averaged per unit and point (10 in the paper).
    epsilon
        ε of the sampling distributions (Eq. 4).
    ddof
        Delta degrees of freedom of Eq. 5–6 (1: a uniform q gives Pearson's r exactly).
    seed
        Master seed; each unit's draws derive from (seed, cell, CRC32 of the unit id).
    """

    min_true_correlation: float = DEFAULT_MIN_TRUE_CORRELATION
    max_units: int | None = None
    n_trials: int = DEFAULT_TRIALS
    epsilon: float = DEFAULT_EPSILON
    ddof: int = 1
    seed: int = 0

    def validate(self) -> None:
        check_range(self, "min_true_correlation", -1.0, 1.0)
        _set(self, "min_true_correlation", float(self.min_true_correlation))
        if self.max_units is not None:
            check_range(self, "max_units", 1, integer=True)
        check_range(self, "n_trials", 1, integer=True)
        check_range(self, "epsilon", 0.0)
        _set(self, "epsilon", float(self.epsilon))
        check_choice(self, "ddof", (0, 1))
        check_range(self, "seed", 0, integer=True)

    def table_columns(self) -> dict[str, int | float]:
        """The knobs the curve tables record, in their column order: n_trials, epsilon, ddof, seed."""
        return {"n_trials": self.n_trials, "epsilon": self.epsilon, "ddof": self.ddof, "seed": self.seed}


@dataclass(frozen=True)
class SamplingOptions(Options):
    """The ``crowd.sampling`` block: the sampling curve (Fig. 2a), RCE against labelled inputs per distribution.

    Attributes
    ----------
    sample_sizes
        Labelled inputs |S| per unit (drawn with replacement).
    methods
        Sampling distributions q compared (:data:`~neuroneval.crowd.sampling.SAMPLING_METHODS`).
    rater_error
        Label-flip rate of this curve (0: noise-free labels, as in Fig. 2a).
    simulation
        The shared knobs (``crowd.simulation``).
    """

    sample_sizes: tuple[int, ...] = DEFAULT_SAMPLE_SIZES
    methods: tuple[str, ...] = SAMPLING_METHODS
    rater_error: float = 0.0
    simulation: SimulationOptions = field(default_factory=SimulationOptions)

    def validate(self) -> None:
        _check_grid(self, "sample_sizes")
        _check_methods(self, "methods", SAMPLING_METHODS)
        _check_rate(self, "rater_error")


@dataclass(frozen=True)
class AggregationOptions(Options):
    """The ``crowd.aggregation`` block: the aggregation curve (Fig. 3a, App. A.3), RCE against cost.

    Cost = inputs × raters per input.

    Attributes
    ----------
    costs
        Ratings per unit; each cost keeps its best number of raters.
    rater_counts
        Raters per input tried at each cost.
    methods
        Aggregation methods compared (:data:`~neuroneval.crowd.aggregation.AGGREGATION_METHODS`, Eq. 7–8).
    sampling
        Sampling distribution of the inputs shown (the paper: ``"pseudo"``, Eq. 4).
    rater_error
        η of the simulated raters (0.13 in the paper, measured on Mechanical Turk).
    assumed_rater_error
        η assumed by the Bayes methods; None means ``rater_error`` (:attr:`model_rater_error`).
    uniform_prior
        Prior P(concept) of Bayes with uniform prior (Method 3a).
    prior_clip
        Clip range (low, high) of the pseudo-label prior (Method 3b), 0 < low < high < 1.
    simulation
        The shared knobs (``crowd.simulation``).
    """

    costs: tuple[int, ...] = DEFAULT_COSTS
    rater_counts: tuple[int, ...] = DEFAULT_RATER_COUNTS
    methods: tuple[str, ...] = AGGREGATION_METHODS
    sampling: SamplingMethod = "pseudo"
    rater_error: float = DEFAULT_RATER_ERROR
    assumed_rater_error: float | None = None
    uniform_prior: float = DEFAULT_UNIFORM_PRIOR
    prior_clip: tuple[float, float] = DEFAULT_PRIOR_CLIP
    simulation: SimulationOptions = field(default_factory=SimulationOptions)

    def validate(self) -> None:
        _check_grid(self, "costs")
        _check_grid(self, "rater_counts")
        _check_methods(self, "methods", AGGREGATION_METHODS)
        check_choice(self, "sampling", SAMPLING_METHODS)
        _check_rate(self, "rater_error")
        if self.assumed_rater_error is not None:
            _check_rate(self, "assumed_rater_error")
        check_range(self, "uniform_prior", 0.0, 1.0, low_open=True, high_open=True)
        _set(self, "uniform_prior", float(self.uniform_prior))
        clip = tuple(self.prior_clip)
        if len(clip) != 2 or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in clip) \
                or not 0 < clip[0] < clip[1] < 1:
            raise OptionsError(f"AggregationOptions.prior_clip must be [low, high] with 0 < low < high < 1, "
                               f"got {list(clip)}")
        _set(self, "prior_clip", (float(clip[0]), float(clip[1])))

    @property
    def model_rater_error(self) -> float:
        """η the Bayes methods assume: ``assumed_rater_error``, or the true ``rater_error`` when None."""
        return self.rater_error if self.assumed_rater_error is None else self.assumed_rater_error


@dataclass(frozen=True)
class CostReductionOptions(Options):
    """The ``crowd.summary`` block: which cost-reduction factors are read off the curves, and their bootstrap.

    Attributes
    ----------
    comparisons
        (experiment, baseline, method) triples, factor = baseline cost / method cost at equal RCE; in params a
        list of ``{experiment, baseline, method}`` mappings.
    unit_groups
        Concept-name prefixes (e.g. ``"class:"``, ``"parent:"``): each factor is also read on the units whose
        explanation starts with the prefix. Rare concepts gain most from importance sampling.
    target_rce
        RCE level r* at which costs are compared; None takes the geometric middle of the range both curves
        cover (:func:`~neuroneval.crowd.cost_reduction.default_target_rce`).
    n_boot, ci_level, seed
        Bootstrap resamples of units, coverage of the percentile interval and seed of the resampling.
    """

    comparisons: tuple[tuple[str, str, str], ...] = DEFAULT_COMPARISONS
    unit_groups: tuple[str, ...] = ()
    target_rce: float | None = None
    n_boot: int = 1000
    ci_level: float = 0.95
    seed: int = 0

    def validate(self) -> None:
        triples = []
        for comparison in self.comparisons:
            if isinstance(comparison, Mapping):
                comparison = tuple(comparison.get(key) for key in ("experiment", "baseline", "method"))
            experiment, baseline, method = tuple(comparison) if len(comparison) == 3 else (None, None, None)
            methods = {"sampling": SAMPLING_METHODS, "aggregation": AGGREGATION_METHODS}.get(experiment, ())
            if baseline not in methods or method not in methods:
                raise OptionsError(f"CostReductionOptions.comparisons: {comparison!r} is not (experiment, baseline, "
                                   "method) with experiment sampling or aggregation and two of its methods")
            triples.append((experiment, baseline, method))
        _set(self, "comparisons", tuple(triples))
        _set(self, "unit_groups", tuple(str(prefix) for prefix in self.unit_groups))
        if self.target_rce is not None:
            check_range(self, "target_rce", 0.0, low_open=True)
            _set(self, "target_rce", float(self.target_rce))
        check_range(self, "n_boot", 0, integer=True)
        check_range(self, "ci_level", 0.0, 1.0, low_open=True, high_open=True)
        _set(self, "ci_level", float(self.ci_level))
        check_range(self, "seed", 0, integer=True)

"""Options of the simulated crowd study (paper 001, Setting 1), parsed and validated once.

Three frozen option objects travel from ``crowd:`` in params.yaml to the library:

- :class:`SimulationOptions` (``crowd.simulation``): knobs both curves share (trials, ε of Eq. 4, ddof of
  Eq. 5–6, master seed);
- :class:`SamplingOptions` (``crowd.sampling``): the sampling curve of Fig. 2a;
- :class:`AggregationOptions` (``crowd.aggregation``): the aggregation curve of Fig. 3a (App. A.3).

Numbers are normalised on construction (grids become tuples of ``int``, rates ``float``), so a study run from
params and one run from Python literals write the same tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from neuroneval.crowd.aggregation import (
    AGGREGATION_METHODS,
    DEFAULT_PRIOR_CLIP,
    DEFAULT_RATER_ERROR,
    DEFAULT_UNIFORM_PRIOR,
)
from neuroneval.crowd.sampling import DEFAULT_EPSILON, SAMPLING_METHODS

#: Numbers of labelled inputs of the sampling curve.
DEFAULT_SAMPLE_SIZES = (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
#: Costs (inputs × raters per input) of the aggregation curve.
DEFAULT_COSTS = (20, 50, 100, 200, 500, 1000, 2000, 5000)
#: Raters per input tried at each cost.
DEFAULT_RATER_COUNTS = (1, 2, 3, 5, 9)
#: Trials averaged per point (10 in the paper).
DEFAULT_TRIALS = 10


def _positive_ints(where: str, values: Sequence[int]) -> tuple[int, ...]:
    grid = tuple(int(value) for value in values)
    if not grid or min(grid) < 1:
        raise ValueError(f"{where} must be a non-empty list of positive integers, got {list(values)}")
    return grid


def _known(where: str, names: Sequence[str], choices: Sequence[str]) -> tuple[str, ...]:
    chosen = tuple(str(name) for name in names)
    unknown = [name for name in chosen if name not in choices]
    if not chosen or unknown:
        raise ValueError(f"{where}: unknown or no method(s) {unknown or list(names)}; choose from {list(choices)}")
    return chosen


def _rate(where: str, value: float) -> float:
    rate = float(value)
    if not 0.0 <= rate < 0.5:
        raise ValueError(f"{where} must be a flip rate in [0, 0.5), got {value}")
    return rate


@dataclass(frozen=True)
class SimulationOptions:
    """Knobs both curves share (``crowd.simulation``).

    Attributes
    ----------
    n_trials
        Simulated studies averaged per unit and point (10 in the paper).
    epsilon
        ε of the sampling distributions (Eq. 4).
    ddof
        Delta degrees of freedom of Eq. 5–6 (1: a uniform q gives Pearson's r exactly).
    seed
        Master seed; each unit's draws derive from (seed, cell, CRC32 of the unit id).
    """

    n_trials: int = DEFAULT_TRIALS
    epsilon: float = DEFAULT_EPSILON
    ddof: int = 1
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_trials", int(self.n_trials))
        object.__setattr__(self, "epsilon", float(self.epsilon))
        object.__setattr__(self, "ddof", int(self.ddof))
        object.__setattr__(self, "seed", int(self.seed))
        if self.n_trials < 1:
            raise ValueError(f"crowd.simulation.n_trials must be at least 1, got {self.n_trials}")
        if self.epsilon < 0:
            raise ValueError(f"crowd.simulation.epsilon must be >= 0, got {self.epsilon}")
        if self.ddof not in (0, 1):
            raise ValueError(f"crowd.simulation.ddof must be 0 or 1, got {self.ddof}")

    @classmethod
    def from_params(cls, simulation: Mapping[str, Any]) -> SimulationOptions:
        """The shared knobs of the ``crowd.simulation`` block (its unit-selection keys are read elsewhere)."""
        return cls(
            n_trials=simulation["n_trials"], epsilon=simulation["epsilon"], ddof=simulation["ddof"],
            seed=simulation["seed"],
        )


@dataclass(frozen=True)
class SamplingOptions:
    """The sampling curve (Fig. 2a): RCE against the number of labelled inputs per sampling distribution.

    Attributes
    ----------
    sample_sizes
        Labelled inputs |S| per unit (drawn with replacement).
    methods
        Sampling distributions q compared (:data:`~neuroneval.crowd.sampling.SAMPLING_METHODS`).
    rater_error
        Label-flip rate of this curve (0: noise-free labels, as in Fig. 2a).
    simulation
        The shared knobs.
    """

    sample_sizes: tuple[int, ...] = DEFAULT_SAMPLE_SIZES
    methods: tuple[str, ...] = SAMPLING_METHODS
    rater_error: float = 0.0
    simulation: SimulationOptions = field(default_factory=SimulationOptions)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sample_sizes", _positive_ints("crowd.sampling.sample_sizes", self.sample_sizes))
        object.__setattr__(self, "methods", _known("crowd.sampling.methods", self.methods, SAMPLING_METHODS))
        object.__setattr__(self, "rater_error", _rate("crowd.sampling.rater_error", self.rater_error))

    @classmethod
    def from_params(cls, sampling: Mapping[str, Any], simulation: Mapping[str, Any]) -> SamplingOptions:
        """Options from the ``crowd.sampling`` and ``crowd.simulation`` blocks of params.yaml."""
        return cls(
            sample_sizes=sampling["sample_sizes"], methods=sampling["methods"], rater_error=sampling["rater_error"],
            simulation=SimulationOptions.from_params(simulation),
        )


@dataclass(frozen=True)
class AggregationOptions:
    """The aggregation curve (Fig. 3a, App. A.3): RCE against cost = inputs × raters per input.

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
        η assumed by the Bayes methods; None means ``rater_error``.
    uniform_prior
        Prior P(concept) of Bayes with uniform prior (Method 3a).
    prior_clip
        Clip range of the pseudo-label prior (Method 3b).
    simulation
        The shared knobs.
    """

    costs: tuple[int, ...] = DEFAULT_COSTS
    rater_counts: tuple[int, ...] = DEFAULT_RATER_COUNTS
    methods: tuple[str, ...] = AGGREGATION_METHODS
    sampling: str = "pseudo"
    rater_error: float = DEFAULT_RATER_ERROR
    assumed_rater_error: float | None = None
    uniform_prior: float = DEFAULT_UNIFORM_PRIOR
    prior_clip: tuple[float, float] = DEFAULT_PRIOR_CLIP
    simulation: SimulationOptions = field(default_factory=SimulationOptions)

    def __post_init__(self) -> None:
        object.__setattr__(self, "costs", _positive_ints("crowd.aggregation.costs", self.costs))
        object.__setattr__(self, "rater_counts", _positive_ints("crowd.aggregation.rater_counts", self.rater_counts))
        object.__setattr__(self, "methods", _known("crowd.aggregation.methods", self.methods, AGGREGATION_METHODS))
        _known("crowd.aggregation.sampling", (self.sampling,), SAMPLING_METHODS)
        object.__setattr__(self, "rater_error", _rate("crowd.aggregation.rater_error", self.rater_error))
        if self.assumed_rater_error is not None:
            assumed = _rate("crowd.aggregation.assumed_rater_error", self.assumed_rater_error)
            object.__setattr__(self, "assumed_rater_error", assumed)
        object.__setattr__(self, "uniform_prior", float(self.uniform_prior))
        if not 0 < self.uniform_prior < 1:
            raise ValueError(f"crowd.aggregation.uniform_prior must be in (0, 1), got {self.uniform_prior}")
        low, high = (float(bound) for bound in self.prior_clip)
        if not 0 < low < high < 1:
            raise ValueError(f"crowd.aggregation.prior_clip must be [low, high] with 0 < low < high < 1, got "
                             f"{list(self.prior_clip)}")
        object.__setattr__(self, "prior_clip", (low, high))

    @property
    def model_rater_error(self) -> float:
        """η the Bayes methods assume: ``assumed_rater_error``, or the true ``rater_error`` when None."""
        return self.rater_error if self.assumed_rater_error is None else self.assumed_rater_error

    @classmethod
    def from_params(cls, aggregation: Mapping[str, Any], simulation: Mapping[str, Any]) -> AggregationOptions:
        """Options from the ``crowd.aggregation`` and ``crowd.simulation`` blocks of params.yaml."""
        return cls(
            costs=aggregation["costs"], rater_counts=aggregation["rater_counts"], methods=aggregation["methods"],
            sampling=aggregation["sampling"], rater_error=aggregation["rater_error"],
            assumed_rater_error=aggregation["assumed_rater_error"], uniform_prior=aggregation["uniform_prior"],
            prior_clip=tuple(aggregation["prior_clip"]), simulation=SimulationOptions.from_params(simulation),
        )

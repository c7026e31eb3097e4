"""Your own metric in the engine: a function named ``package.module:function`` or an entry point of the group
``neuroneval.metrics``, scored wherever a registered metric is (``score``, the sanity tests, meta-AUPRC).

Three forms, declared with :func:`user_metric` (or the same names as plain attributes of the function):

* ``"pair"`` (default): ``f(a, c, **params) -> float`` for one unit's activations ``a`` (n,) and one concept
  ``c`` (n,), both float64; the engine calls it for every pair it needs, with a progress bar on long calls;
* ``"matrix"``: ``f(A, C, **params) -> (K', C')`` for unit rows ``A`` (K', n) and concept rows ``C`` (C', n):
  every pair of a block at once (vectorised over pairs);
* ``"kernel"``: the engine's own batched kernel ``f(ctx, chunk, pairing)`` (:mod:`neuroneval.metrics.context`),
  as the built-in metrics are written.

``params`` names the hyper-parameters the function takes, among ``alpha`` (top-α binarization ``k = ⌈α·n⌉``,
000 Eq. A.1, chosen on validation units like the built-ins') and ``lam`` (WPMI's λ). ``value_range`` is the score's
``(low, high)``: it sets the ``max − min`` of the sanity tests' Δs (000 Eq. 10; the observed spread where a bound
is infinite, as for MAD). The function sees the data as they are in both tie modes (no tie-breaking noise).

>>> import numpy as np
>>> @user_metric(value_range=(-1.0, 1.0))
... def sign_agreement(a, c):
...     return float(np.mean(np.sign(a - a.mean()) == np.sign(c - c.mean())) * 2 - 1)
>>> facts_of(sign_agreement).form, facts_of(sign_agreement).value_range
('pair', (-1.0, 1.0))
"""

from __future__ import annotations

import math
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Literal

import numpy as np

from neuroneval.metrics.context import AllPairs, ConceptChunk, Context
from neuroneval.metrics.metric_options import MetricOptions, TopAlphaOptions, WpmiOptions
from neuroneval.progress import progress_bar

#: Entry-point group under which an installed package registers its metrics (``name = "package.module:function"``).
ENTRY_POINT_GROUP = "neuroneval.metrics"

#: The hyper-parameters a user metric may take (chosen by the meta-evaluation's grids).
USER_PARAMS = ("alpha", "lam")

#: The forms of a user metric (see the module docstring).
FORMS = ("pair", "matrix", "kernel")

Form = Literal["pair", "matrix", "kernel"]

_FACTS_ATTRIBUTE = "neuroneval_metric"

#: Pairs scored by a ``"pair"`` function before its progress bar may show (it appears after a delay anyway).
_BAR_PAIRS = 1000


@dataclass(frozen=True)
class UserMetricFacts:
    """What the engine, the sanity tests and the meta-evaluation must know about a user metric."""

    value_range: tuple[float, float] = (-math.inf, math.inf)
    higher_is_better: bool = True
    params: tuple[str, ...] = ()
    form: Form = "pair"
    formula: str = ""

    def __post_init__(self) -> None:
        low, high = (float(value) for value in self.value_range)
        if not low < high:
            raise ValueError(f"value_range must be (low, high) with low < high, got {self.value_range!r}")
        object.__setattr__(self, "value_range", (low, high))
        object.__setattr__(self, "params", tuple(self.params))
        unknown = [name for name in self.params if name not in USER_PARAMS]
        if unknown:
            raise ValueError(f"params may name {list(USER_PARAMS)}; got {unknown}")
        if "lam" in self.params and "alpha" not in self.params:
            raise ValueError("params: 'lam' comes with 'alpha' (λ weighs a top-α term, as in WPMI); declare both")
        if self.form not in FORMS:
            raise ValueError(f"form must be one of {list(FORMS)}, got {self.form!r}")
        if not isinstance(self.higher_is_better, bool):
            raise ValueError(f"higher_is_better must be True or False, got {self.higher_is_better!r}")

    @property
    def options(self) -> type[MetricOptions]:
        """The engine's options class for these params: none, α (:class:`TopAlphaOptions`) or α and λ
        (:class:`WpmiOptions`)."""
        return WpmiOptions if "lam" in self.params else TopAlphaOptions if "alpha" in self.params else MetricOptions


#: Metrics already resolved in this process: name → (facts, kernel), so that a lookup imports once.
_RESOLVED: dict[str, tuple[UserMetricFacts, Callable[..., Any]]] = {}


def user_metric(*, value_range: tuple[float, float] = (-math.inf, math.inf), higher_is_better: bool = True,
                params: Sequence[str] = (), form: Form = "pair", formula: str = "") -> Callable[[Any], Any]:
    """Declare a function's facts as a metric (returns the function unchanged, with the facts attached).

    Parameters
    ----------
    value_range : (low, high), default unbounded
        Range of the score; the sanity tests divide differences by ``high − low`` (or the observed spread).
    higher_is_better : bool, default True
        Whether a better explanation scores higher (meta-AUPRC ranks pairs by it).
    params : subset of ("alpha", "lam")
        Hyper-parameters passed as keywords and searched on validation units.
    form : {"pair", "matrix", "kernel"}, default "pair"
        How the function is called (module docstring).
    formula : str
        The definition, shown by ``neuroneval metrics``-style listings and the sanity card.
    """
    facts = UserMetricFacts(value_range=tuple(value_range), higher_is_better=higher_is_better,  # type: ignore[arg-type]
                            params=tuple(params), form=form, formula=formula)

    def attach(function: Any) -> Any:
        setattr(function, _FACTS_ATTRIBUTE, facts)
        return function

    return attach


def facts_of(function: Any) -> UserMetricFacts:
    """The declared facts of a metric function: those of :func:`user_metric`, else its plain attributes
    ``value_range``, ``higher_is_better``, ``params``, ``form``, ``formula`` (defaults where absent)."""
    declared = getattr(function, _FACTS_ATTRIBUTE, None)
    if isinstance(declared, UserMetricFacts):
        return declared
    fields = {name: getattr(function, name) for name in ("value_range", "higher_is_better", "params", "form",
                                                           "formula") if hasattr(function, name)}
    return UserMetricFacts(**fields)


def is_user_metric_name(name: str) -> bool:
    """Whether ``name`` is written as a user metric, ``package.module:function``."""
    module, _, attribute = name.partition(":")
    return bool(module) and bool(attribute) and all(part.isidentifier() for part in [*module.split("."),
                                                                                     *attribute.split(".")])


def _entry_point_target(name: str) -> str | None:
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if entry.name == name:
            return entry.value
    return None


def load_user_function(name: str) -> Any | None:
    """The function behind a user metric name (``module:function`` or an entry point of
    :data:`ENTRY_POINT_GROUP`), ``None`` when ``name`` is neither; ``ValueError`` names what failed to import."""
    target = name if is_user_metric_name(name) else _entry_point_target(name)
    if target is None:
        return None
    module_name, _, attribute = target.partition(":")
    try:
        found = pkgutil.resolve_name(target)
    except ImportError as error:
        raise ValueError(f"metric {name!r}: cannot import module {module_name!r} ({error}); is it on PYTHONPATH "
                         f"or installed?") from None
    except AttributeError:
        raise ValueError(f"metric {name!r}: module {module_name!r} has no attribute {attribute!r}") from None
    if not callable(found):
        raise ValueError(f"metric {name!r}: {target} is not callable")
    return found


def _checked(name: str, values: Any, shape: tuple[int, ...], what: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.shape != shape:
        raise ValueError(f"metric {name!r}: {what} returned shape {array.shape}, expected {shape}")
    bad = ~np.isfinite(array)
    if bad.any():
        position = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"metric {name!r}: {what} returned a non-finite score {array[position]} at {position}; "
                         f"meta-AUPRC and the sanity tests need finite scores (return your convention for "
                         f"undefined cases instead)")
    return array


def _pair_positions(ctx: Context, chunk: ConceptChunk, pairing: Any) -> tuple[np.ndarray, np.ndarray]:
    """(unit positions, concept positions) of the pairs a kernel call scores, within the block and the chunk."""
    if isinstance(pairing, AllPairs):
        units, concepts = np.meshgrid(np.arange(ctx.unit_rows.size), np.arange(chunk.rows.size), indexing="ij")
        return units.ravel(), concepts.ravel()
    return ctx.be.to_numpy(pairing.units).astype(np.int64), ctx.be.to_numpy(pairing.concepts).astype(np.int64)


def user_kernel(name: str, function: Any, facts: UserMetricFacts) -> Callable[..., Any]:
    """The engine kernel ``kernel(ctx, chunk, pairing)`` of a user metric of form ``"pair"`` or ``"matrix"``:
    the function's scores of the block's pairs at every grid point (stacked on the unit side, as the engine
    expects), checked to be finite; a ``"kernel"`` function is returned as it is."""
    if facts.form == "kernel":
        return function

    def kernel(ctx: Context, chunk: ConceptChunk, pairing: Any) -> np.ndarray:
        unit_values, concept_values = ctx.host_unit_values(), chunk.host_values()
        unit_positions, concept_positions = _pair_positions(ctx, chunk, pairing)
        per_point = []
        for point in ctx.points or (ctx.params,):
            keywords = {param: getattr(point, param) for param in facts.params}
            if facts.form == "matrix":
                block = _checked(name, function(unit_values, concept_values, **keywords),
                                 (unit_values.shape[0], concept_values.shape[0]), "the matrix function")
                scores = block[unit_positions, concept_positions]
            else:
                scores = np.empty(unit_positions.size)
                with progress_bar(total=unit_positions.size, desc=f"scoring {name}", unit="pair",
                                  enabled=unit_positions.size >= _BAR_PAIRS, leave=False) as bar:
                    for index, (unit, concept) in enumerate(zip(unit_positions, concept_positions, strict=True)):
                        scores[index] = _checked(name, function(unit_values[unit], concept_values[concept],
                                                                **keywords), (), f"the pair ({unit}, {concept})")
                        bar.update(1)
            per_point.append(scores.reshape(ctx.unit_rows.size, chunk.rows.size) if isinstance(pairing, AllPairs)
                             else scores)
        return np.concatenate(per_point, axis=0) if isinstance(pairing, AllPairs) else per_point[0]

    return kernel


def resolve_user_metric(name: str) -> tuple[UserMetricFacts, Callable[..., Any]] | None:
    """(facts, engine kernel) of a user metric, ``None`` when ``name`` names none (cached per process)."""
    if name not in _RESOLVED:
        function = load_user_function(name)
        if function is None:
            return None
        try:
            facts = facts_of(function)
        except ValueError as error:
            raise ValueError(f"metric {name!r}: {error}") from None
        _RESOLVED[name] = facts, user_kernel(name, function, facts)
    return _RESOLVED[name]

"""Degenerate (constant and near-dead) units and probe sets too small for a top fraction (docs/design.md §5.6).

A unit that takes one value on every probing input carries no information, yet the metrics give it numbers:
top-α binarization marks every input active (``at_least_kth``: all inputs tie with the k-th largest), so its
IoU with a concept is the concept's positive rate, which can be the best IoU of a layer. This module is the one
home of the definition; the outputs that rank units, explain them or give them a truth concept read it
(``neuroneval score``/``explain``/``validate``, :func:`neuroneval.settings.iou_truth`, the neuron viewer).

Definition. For unit ``k`` with activations ``a_1 … a_n`` over the probing inputs, the number of inputs on which
it *varies* is

.. math:: v_k = \\min\\big(\\#\\{i : a_i > \\min_j a_j\\},\\ \\#\\{i : a_i < \\max_j a_j\\}\\big),

the inputs off its floor (a ReLU unit's active inputs) or, for a unit saturated at its ceiling, off its ceiling.
The unit is **constant** when ``v_k = 0`` (``max == min``) and **near-dead** when ``0 < v_k < min(m, n/2)``
(``m = UnitCheckOptions.min_varying_inputs``, default 5): fewer than ``m`` inputs tell its top inputs from the
rest, so a top fraction larger than ``v_k / n`` ties at the floor and marks every input active, as for a constant
unit (the ``n/2`` keeps a unit that varies on half of a tiny probe set from counting as dead). Both are
*degenerate*. The check costs one column min, max and two counts.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from neuroneval.metrics.edgecases import NeuronEvalWarning
from neuroneval.options import Options, check_range

#: ``DegenerateUnits.status`` values, in the order of increasing degeneracy.
UNIT_STATUSES = ("ok", "near_dead", "constant")
#: The boolean column that flags a degenerate unit's rows in score and explanation tables.
DEGENERATE_COLUMN = "degenerate"
#: How many unit names a warning or a listing spells out before it gives the count of the rest.
SHOWN_UNITS = 5


class DegenerateUnitWarning(NeuronEvalWarning):
    """Some units are constant or near-dead over the probing inputs; the message names them (first few + count)."""


class SmallProbeSetWarning(NeuronEvalWarning):
    """A top fraction (α, quantile) selects fewer than ``min_top_inputs`` of the n probing inputs."""


class TiedGridWarning(NeuronEvalWarning):
    """A hyperparameter search found the same validation score at every grid point: its choice says nothing."""


@dataclass(frozen=True)
class UnitCheckOptions(Options):
    """Thresholds of the degenerate-unit and small-probe-set checks.

    min_varying_inputs: a unit that varies on fewer inputs (``v_k`` of the module docstring) but on at least one
    is near-dead (1 flags constant units only). min_top_inputs: a top fraction ``f`` (α, quantile) over ``n``
    inputs that selects fewer inputs, ``f·n < min_top_inputs``, gets a :class:`SmallProbeSetWarning`.
    """

    min_varying_inputs: int = 5
    min_top_inputs: int = 10

    def validate(self) -> None:
        check_range(self, "min_varying_inputs", 1, integer=True)
        check_range(self, "min_top_inputs", 1, integer=True)


def _listing(names: Sequence[str]) -> str:
    shown = ", ".join(names[:SHOWN_UNITS])
    more = len(names) - SHOWN_UNITS
    return f"{shown} and {more} more" if more > 0 else shown


@dataclass(frozen=True)
class DegenerateUnits:
    """The outcome of :func:`degenerate_units`: each unit's number of varying inputs and its status."""

    unit_names: tuple[str, ...]
    varying_inputs: np.ndarray  # (K,) int64: v_k
    n_inputs: int
    min_varying_inputs: int

    @property
    def constant(self) -> np.ndarray:
        """(K,) bool: ``max == min`` over the inputs."""
        return self.varying_inputs == 0

    @property
    def varying_threshold(self) -> float:
        """``min(min_varying_inputs, n/2)``: a unit that varies on fewer inputs is degenerate."""
        return min(float(self.min_varying_inputs), self.n_inputs / 2)

    @property
    def near_dead(self) -> np.ndarray:
        """(K,) bool: varies on at least one input but on fewer than :attr:`varying_threshold`."""
        return (self.varying_inputs > 0) & (self.varying_inputs < self.varying_threshold)

    @property
    def degenerate(self) -> np.ndarray:
        """(K,) bool: constant or near-dead."""
        return self.constant | self.near_dead

    @property
    def status(self) -> list[str]:
        """Each unit's status: ``ok``, ``near_dead`` or ``constant`` (:data:`UNIT_STATUSES`)."""
        return [UNIT_STATUSES[2] if constant else UNIT_STATUSES[1] if near else UNIT_STATUSES[0]
                for constant, near in zip(self.constant, self.near_dead, strict=True)]

    def names(self, which: str = "degenerate") -> list[str]:
        """The names of the ``constant``, ``near_dead`` or ``degenerate`` units, in column order."""
        if which not in ("constant", "near_dead", "degenerate"):
            raise ValueError(f"which must be constant, near_dead or degenerate, got {which!r}")
        mask = getattr(self, which)
        return [name for name, flagged in zip(self.unit_names, mask, strict=True) if flagged]

    def by_name(self) -> dict[str, bool]:
        """``{unit: degenerate}`` for every unit."""
        return dict(zip(self.unit_names, (bool(flag) for flag in self.degenerate), strict=True))

    def summary(self) -> str:
        """One line naming the degenerate units (first few + count); empty when there are none."""
        parts = []
        constant, near_dead = self.names("constant"), self.names("near_dead")
        if constant:
            parts.append(f"{len(constant)} constant unit(s) ({_listing(constant)})")
        if near_dead:
            parts.append(f"{len(near_dead)} near-dead unit(s) varying on fewer than {self.varying_threshold:g} "
                         f"inputs ({_listing(near_dead)})")
        if not parts:
            return ""
        return f"{' and '.join(parts)} of {len(self.unit_names)} over {self.n_inputs} inputs"

    def warn(self, consequence: str, *, stacklevel: int = 2) -> None:
        """A :class:`DegenerateUnitWarning` naming the degenerate units and what follows for them (none if none)."""
        summary = self.summary()
        if summary:
            warnings.warn(f"{summary}: {consequence}", DegenerateUnitWarning, stacklevel=stacklevel + 1)


def degenerate_units(activations: np.ndarray, unit_names: Sequence[str] | None = None, *,
                     options: UnitCheckOptions | None = None) -> DegenerateUnits:
    """Find the constant and near-dead units of an (n inputs × K units) activation matrix.

    ``v_k = min(#{i: a_ik > min_i a_ik}, #{i: a_ik < max_i a_ik})`` (the module docstring); ``v_k = 0`` is a
    constant unit, ``0 < v_k < min(options.min_varying_inputs, n/2)`` a near-dead one. Activations must be finite (the
    data contract); names default to ``"0" … "K-1"``.

    >>> rare = np.zeros(8)
    >>> rare[3] = 5.0
    >>> units = degenerate_units(np.column_stack([np.zeros(8), np.arange(8.0), rare]), ["dead", "ok", "rare"])
    >>> units.status
    ['constant', 'ok', 'near_dead']
    """
    options = options or UnitCheckOptions()
    matrix = np.asarray(activations)
    if matrix.ndim != 2:
        raise ValueError(f"activations must be (inputs, units), got shape {matrix.shape}")
    names = [str(k) for k in range(matrix.shape[1])] if unit_names is None else [str(name) for name in unit_names]
    if len(names) != matrix.shape[1]:
        raise ValueError(f"got {len(names)} unit names for {matrix.shape[1]} activation columns")
    if matrix.shape[0] == 0:
        raise ValueError("activations have no inputs (rows)")
    finite = np.isfinite(matrix).all(axis=0)
    if not finite.all():
        raise ValueError(f"activations of unit {names[int(np.flatnonzero(~finite)[0])]!r} are not all finite")
    low, high = matrix.min(axis=0), matrix.max(axis=0)
    above_floor = np.count_nonzero(matrix > low, axis=0)
    below_ceiling = np.count_nonzero(matrix < high, axis=0)
    return DegenerateUnits(unit_names=tuple(names),
                           varying_inputs=np.minimum(above_floor, below_ceiling).astype(np.int64),
                           n_inputs=int(matrix.shape[0]), min_varying_inputs=options.min_varying_inputs)


def small_top_fractions(n_inputs: int, fractions: Sequence[float], *,
                        options: UnitCheckOptions | None = None) -> list[float]:
    """The fractions ``f`` of ``fractions`` that select fewer than ``options.min_top_inputs`` inputs: ``f·n < m``."""
    minimum = (options or UnitCheckOptions()).min_top_inputs
    return [float(fraction) for fraction in fractions if float(fraction) * n_inputs < minimum]


def warn_small_probe_set(n_inputs: int, name: str, fractions: float | Sequence[float], *, where: str,
                         options: UnitCheckOptions | None = None, stacklevel: int = 2) -> list[float]:
    """A :class:`SmallProbeSetWarning` when a top fraction (``name``: ``alpha``, ``quantile``) times ``n_inputs``
    is below ``options.min_top_inputs``, naming the fraction(s), n and the count of inputs selected; returns the
    fractions that were too small.

    Defaults made for 50 000 images (α = 0.005: 250 inputs) select 3–4 inputs of a 719-input probe set, too few
    for a binarized unit to be told from chance.
    """
    options = options or UnitCheckOptions()
    values = [fractions] if isinstance(fractions, int | float) else list(fractions)
    small = small_top_fractions(n_inputs, values, options=options)
    if small:
        counts = ", ".join(f"{name} = {value:g} → {value * n_inputs:.3g}" for value in small)
        warnings.warn(f"{where}: {counts} of n = {n_inputs} inputs, fewer than {options.min_top_inputs}: the top "
                      f"inputs are too few to tell a concept from chance; use a larger {name} or more inputs",
                      SmallProbeSetWarning, stacklevel=stacklevel + 1)
    return small


def flag_degenerate_rows(frame: pd.DataFrame, units: DegenerateUnits, *, consequence: str) -> pd.DataFrame:
    """Any table with a ``unit`` column (``neuroneval score``'s ``unit, concept, score``) with a boolean
    ``degenerate`` column, and a warning naming the degenerate units and ``consequence``; values are unchanged
    (the metrics keep their documented numbers)."""
    flags = units.by_name()
    flagged = frame.copy()
    flagged[DEGENERATE_COLUMN] = [flags.get(unit, False) for unit in frame["unit"].astype(str)]
    units.warn(consequence, stacklevel=2)
    return flagged

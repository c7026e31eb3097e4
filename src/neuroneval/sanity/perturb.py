"""Perturbed concepts for the Missing and Extra Labels tests (paper 000, Sec. 4.2, App. E.1, E.3).

Random perturbations
--------------------
Missing labels (Eq. 9), generalised to a kept fraction ``r₋`` (App. E.1)::

    c⁻_i = c_i · 1[U_i > 1 − r₋]                      (r₋ = 0.5 gives Eq. 9: c_i · 1[U_i > 0.5])

so every label survives with probability r₋ and ``E‖c⁻‖₁ = r₋‖c‖₁``.

Extra labels (Eq. 12), generalised to a multiplier ``r₊`` of the positives (App. E.1)::

    c⁺_i = min(1, c_i + 1[U_i < q]),    q = (r₊ − 1) · s / (n − s),    s = ‖c‖₁
                                                       (r₊ = 2 gives Eq. 12: q = s / (n − s))

For a binary concept s is its number of positives, each of the n − s negatives turns positive with
probability q, and ``E‖c⁺‖₁ = r₊ s`` as long as q ≤ 1, i.e. r₊ ≤ n / s. A larger r₊ saturates: q is capped at
1 and every input becomes positive. A concept with no positive (s = 0) or no negative (s = n) is returned
unchanged. The paper applies both tests to binary labels only (Sec. 4.2); for probabilities in (0, 1) the
same formulas are used as written (a chosen input is set to 1), so the r₊ target then holds only
approximately. App. E.1 uses r₋ ∈ {0.33, 0.5, 0.75} and r₊ ∈ {1.33, 2, 3}; the authors' code implements
them as ``mask = U > 1 − r₋`` and ``cutoff = (r₊ − 1)·s/(n − s)``, the definitions above.

Seeding
-------
``U`` for concept ``t`` and draw ``d`` comes from its own generator
``numpy.random.default_rng([seed, stream, t, d])`` (stream 1 for missing, 2 for extra labels), where ``t`` is
the concept's identity (its column in the concept table unless ``concept_ids`` says otherwise). A draw is
therefore the same whichever other concepts or draws are generated with it, in whatever order or chunks.

Semantic perturbations (App. E.3)
---------------------------------
Instead of random subsets/supersets, the paper replaces a concept by a real sub- or superclass from the
WordNet hierarchy: c⁻ = the *largest subclass* (child) of the concept and c⁺ = the *smallest superclass*
(parent) of the concept, "largest"/"smallest" by number of positives. :func:`semantic_missing_labels`
also offers two random variants (a random child; the union of a random subset of the children).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, get_args

import numpy as np

#: The two sanity tests (Sec. 4.2): Missing Labels (c⁻ ⊂ c, Eq. 9) and Extra Labels (c⁺ ⊃ c, Eq. 12).
TESTS = ("missing", "extra")
STREAM_MISSING = 1
STREAM_EXTRA = 2
STREAM_SEMANTIC = 3

#: The perturbation strengths of the standard tests (Eq. 9 and Eq. 12).
DEFAULT_KEEP = 0.5
DEFAULT_MULTIPLIER = 2.0

SubclassRule = Literal["largest", "random_child", "random_subset"]
SUBCLASS_RULES: tuple[SubclassRule, ...] = get_args(SubclassRule)


def _as_matrix(concepts: Any) -> np.ndarray:
    """A float (n, C) view of a concept table (array, DataFrame or a single vector)."""
    matrix = np.asarray(concepts)
    if matrix.ndim == 1:
        matrix = matrix[:, None]
    if matrix.ndim != 2:
        raise ValueError(f"concepts must be a vector or an (n, C) matrix, got shape {matrix.shape}")
    if not np.issubdtype(matrix.dtype, np.number) and matrix.dtype != bool:
        raise ValueError(f"concepts must be numeric, got dtype {matrix.dtype}")
    return matrix


def _draw_indices(draws: int | Iterable[int]) -> np.ndarray:
    """``draws`` as an array of draw indices: an int d means draws 0 … d − 1."""
    if isinstance(draws, int | np.integer):
        if draws < 1:
            raise ValueError(f"draws must be ≥ 1, got {draws}")
        return np.arange(int(draws))
    indices = np.asarray(list(draws), dtype=np.int64)
    if indices.ndim != 1 or indices.size == 0 or np.any(indices < 0):
        raise ValueError("draws must be a positive int or a non-empty sequence of draw indices ≥ 0")
    return indices


def _concept_ids(concept_ids: Sequence[int] | None, n_concepts: int) -> np.ndarray:
    if concept_ids is None:
        return np.arange(n_concepts)
    ids = np.asarray(concept_ids, dtype=np.int64)
    if ids.shape != (n_concepts,) or np.any(ids < 0):
        raise ValueError(f"concept_ids must hold one non-negative id per concept ({n_concepts}), got {ids.shape}")
    return ids


def draw_uniforms(n: int, *, seed: int, stream: int, concept_id: int, draw: int) -> np.ndarray:
    """The uniforms ``U`` (float64, shape (n,)) of one concept and draw: ``default_rng([seed, stream, t, d])``."""
    return np.random.default_rng([seed, stream, int(concept_id), int(draw)]).random(n)


def _perturb(matrix: np.ndarray, draws: np.ndarray, ids: np.ndarray, seed: int, stream: int,
             cutoffs: np.ndarray, dtype: Any) -> np.ndarray:
    """Apply the missing (stream 1) or extra (stream 2) rule column by column; output (n, C, D)."""
    n, n_concepts = matrix.shape
    out = np.empty((n, n_concepts, draws.size), dtype=dtype)
    for column in range(n_concepts):
        values = matrix[:, column].astype(np.float64, copy=False)
        for slot, draw in enumerate(draws):
            uniforms = draw_uniforms(n, seed=seed, stream=stream, concept_id=ids[column], draw=draw)
            if stream == STREAM_MISSING:
                out[:, column, slot] = values * (uniforms > cutoffs[column])
            else:
                out[:, column, slot] = np.minimum(1.0, values + (uniforms < cutoffs[column]))
    return out


def missing_labels(concepts: Any, draws: int | Iterable[int] = 1, *, keep: float = DEFAULT_KEEP, seed: int = 0,
                   concept_ids: Sequence[int] | None = None, dtype: Any = np.float32) -> np.ndarray:
    """Randomly remove labels: ``c⁻ = c · 1[U > 1 − r₋]`` (paper 000, Eq. 9; r₋ of App. E.1).

    Parameters
    ----------
    concepts : array-like, shape (n,) or (n, C)
        Concept activations ``c_t`` (normally binary labels).
    draws : int or iterable of int, default 1
        Number of draws (indices 0 … draws − 1) or the explicit draw indices to generate.
    keep : float in (0, 1], default 0.5
        r₋ = E‖c⁻‖₁ / ‖c‖₁, the probability that a label survives. 0.5 is the paper's test.
    seed : int, default 0
        Base seed; draw d of concept t uses ``default_rng([seed, 1, t, d])``.
    concept_ids : sequence of int, optional
        Identity of each column for seeding (default: the column positions 0 … C − 1).
    dtype : numpy dtype, default float32

    Returns
    -------
    numpy.ndarray, shape (n, C, D)
        ``out[:, t, j]`` is c⁻ of concept t for the j-th requested draw.

    Examples
    --------
    >>> c = np.zeros(10_000); c[:2_000] = 1
    >>> kept = missing_labels(c, draws=3, seed=1).sum(axis=0)[0]
    >>> bool(np.all(np.abs(kept / 2_000 - 0.5) < 0.05))
    True
    """
    if not 0.0 < keep <= 1.0:
        raise ValueError(f"keep (r₋) must lie in (0, 1], got {keep}")
    matrix = _as_matrix(concepts)
    draw_ids, ids = _draw_indices(draws), _concept_ids(concept_ids, matrix.shape[1])
    cutoffs = np.full(matrix.shape[1], 1.0 - keep)
    return _perturb(matrix, draw_ids, ids, seed, STREAM_MISSING, cutoffs, dtype)


def extra_cutoffs(concepts: Any, multiplier: float = DEFAULT_MULTIPLIER) -> np.ndarray:
    """``q = (r₊ − 1)·s/(n − s)`` per concept, capped to [0, 1]; 0 when s = 0 or s = n (Eq. 12, App. E.1)."""
    matrix = _as_matrix(concepts)
    n = matrix.shape[0]
    positives = matrix.sum(axis=0, dtype=np.float64)
    negatives = n - positives
    ratio = np.divide(positives, negatives, out=np.zeros_like(positives), where=negatives > 0)
    return np.clip((multiplier - 1.0) * ratio, 0.0, 1.0)


def extra_labels(concepts: Any, draws: int | Iterable[int] = 1, *, multiplier: float = DEFAULT_MULTIPLIER,
                 seed: int = 0, concept_ids: Sequence[int] | None = None, dtype: Any = np.float32) -> np.ndarray:
    """Randomly add labels: ``c⁺ = min(1, c + 1[U < (r₊ − 1)·s/(n − s)])`` (paper 000, Eq. 12; r₊ of App. E.1).

    Parameters
    ----------
    concepts : array-like, shape (n,) or (n, C)
        Concept activations ``c_t`` (normally binary labels); ``s = ‖c_t‖₁``.
    draws : int or iterable of int, default 1
        Number of draws (indices 0 … draws − 1) or the explicit draw indices to generate.
    multiplier : float ≥ 1, default 2.0
        r₊ = E‖c⁺‖₁ / ‖c‖₁ for binary concepts while ``(r₊ − 1)·s ≤ n − s``; beyond that every input becomes
        positive. 2 is the paper's test ("randomly doubling the size of c_t").
    seed : int, default 0
        Base seed; draw d of concept t uses ``default_rng([seed, 2, t, d])``.
    concept_ids : sequence of int, optional
        Identity of each column for seeding (default: the column positions 0 … C − 1).
    dtype : numpy dtype, default float32

    Returns
    -------
    numpy.ndarray, shape (n, C, D)

    Examples
    --------
    >>> c = np.zeros(10_000); c[:1_000] = 1
    >>> added = extra_labels(c, draws=3, seed=1).sum(axis=0)[0]
    >>> bool(np.all(np.abs(added / 1_000 - 2.0) < 0.15))
    True
    """
    if not multiplier >= 1.0:
        raise ValueError(f"multiplier (r₊) must be ≥ 1, got {multiplier}")
    matrix = _as_matrix(concepts)
    draw_ids, ids = _draw_indices(draws), _concept_ids(concept_ids, matrix.shape[1])
    return _perturb(matrix, draw_ids, ids, seed, STREAM_EXTRA, extra_cutoffs(matrix, multiplier), dtype)


def perturb_labels(test: str, concepts: Any, draws: int | Iterable[int] = 1, *, strength: float | None = None,
                   seed: int = 0, concept_ids: Sequence[int] | None = None, dtype: Any = np.float32) -> np.ndarray:
    """:func:`missing_labels` (``test="missing"``, strength r₋) or :func:`extra_labels` (``"extra"``, r₊)."""
    if test == "missing":
        return missing_labels(concepts, draws, keep=DEFAULT_KEEP if strength is None else strength, seed=seed,
                              concept_ids=concept_ids, dtype=dtype)
    if test == "extra":
        return extra_labels(concepts, draws, multiplier=DEFAULT_MULTIPLIER if strength is None else strength,
                            seed=seed, concept_ids=concept_ids, dtype=dtype)
    raise ValueError(f"test must be 'missing' or 'extra', got {test!r}")


def default_strength(test: str) -> float:
    """r₋ = 0.5 for ``"missing"``, r₊ = 2 for ``"extra"`` (the paper's standard tests)."""
    if test not in ("missing", "extra"):
        raise ValueError(f"test must be 'missing' or 'extra', got {test!r}")
    return DEFAULT_KEEP if test == "missing" else DEFAULT_MULTIPLIER


# --------------------------------------------------------------------------------------------------------------
# Semantic sub- and superclasses (App. E.3)


def _parents(hierarchy: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    parents: dict[str, list[str]] = {}
    for parent, children in hierarchy.items():
        for child in children:
            parents.setdefault(child, []).append(parent)
    return parents


def _positions(names: Sequence[str]) -> dict[str, int]:
    positions = {name: index for index, name in enumerate(names)}
    if len(positions) != len(names):
        raise ValueError("concept names must be unique")
    return positions


def semantic_superclass(names: Sequence[str], hierarchy: Mapping[str, Sequence[str]],
                        positives: Sequence[float]) -> dict[int, int]:
    """The smallest superclass of each concept (App. E.3): concept position → position of c⁺.

    Among the concept's parents (``hierarchy`` maps parent → children) that are columns of the table, the one
    with the fewest positives; ties go to the earlier column. Concepts without such a parent are left out.
    Any further ancestor contains a parent, so it is never smaller.
    """
    positions, parents = _positions(names), _parents(hierarchy)
    out: dict[int, int] = {}
    for name, index in positions.items():
        candidates = [positions[p] for p in parents.get(name, ()) if p in positions]
        if candidates:
            out[index] = min(candidates, key=lambda column: (positives[column], column))
    return out


def semantic_subclasses(names: Sequence[str], hierarchy: Mapping[str, Sequence[str]]) -> dict[int, list[int]]:
    """Concept position → positions of its children that are columns of the table (concepts with none left out)."""
    positions = _positions(names)
    out: dict[int, list[int]] = {}
    for parent, children in hierarchy.items():
        columns = [positions[child] for child in children if child in positions]
        if parent in positions and columns:
            out[positions[parent]] = columns
    return out


def semantic_extra_labels(concepts: Any, names: Sequence[str],
                          hierarchy: Mapping[str, Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
    """c⁺ = the smallest superclass of each concept (App. E.3, semantic extra labels).

    Parameters
    ----------
    concepts : array-like, shape (n, C)
        Concept table whose columns are named by ``names``.
    names : sequence of str, length C
    hierarchy : mapping parent name → child names
        The concept hierarchy (e.g. WordNet restricted to the table's concepts).

    Returns
    -------
    positions : numpy.ndarray of int, shape (m,)
        Columns of the concepts that have a superclass in the table (the others cannot be tested).
    labels : numpy.ndarray, shape (n, m, 1)
        The superclass column for each of them (one deterministic draw).
    """
    matrix = _as_matrix(concepts)
    mapping = semantic_superclass(names, hierarchy, matrix.sum(axis=0, dtype=np.float64))
    positions = np.array(sorted(mapping), dtype=np.int64)
    targets = np.array([mapping[p] for p in positions], dtype=np.int64)
    return positions, matrix[:, targets][:, :, None].astype(np.float32)


def semantic_missing_labels(concepts: Any, names: Sequence[str], hierarchy: Mapping[str, Sequence[str]], *,
                            rule: str = "largest", draws: int | Iterable[int] = 1, keep: float = DEFAULT_KEEP,
                            seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """c⁻ = a subclass of each concept that has children in the table (App. E.3, semantic missing labels).

    Parameters
    ----------
    concepts, names, hierarchy
        As for :func:`semantic_extra_labels`.
    rule : {"largest", "random_child", "random_subset"}, default "largest"
        ``"largest"`` is the paper's construction: the child with the most positives (ties: earlier column),
        one deterministic draw. ``"random_child"``: a uniformly random child per draw. ``"random_subset"``:
        the union (elementwise max) of the children each kept with probability ``keep`` (at least one; when
        there are two or more children, not all of them, so c⁻ is a proper semantic subset).
    draws, keep, seed
        Draws for the random rules; draw d of concept t uses ``default_rng([seed, 3, t, d])``. ``keep`` must lie
        in (0, 1) for ``"random_subset"``; the other rules ignore it.

    Returns
    -------
    positions : numpy.ndarray of int, shape (m,)
        Columns of the concepts that have children in the table.
    labels : numpy.ndarray, shape (n, m, D)
        D = 1 for ``"largest"``.
    """
    if rule not in SUBCLASS_RULES:
        raise ValueError(f"rule must be one of {SUBCLASS_RULES}, got {rule!r}")
    if rule == "random_subset" and not 0.0 < keep < 1.0:
        raise ValueError(f"keep must lie in (0, 1) for the random subset rule, got {keep}")
    matrix = _as_matrix(concepts)
    mapping = semantic_subclasses(names, hierarchy)
    positions = np.array(sorted(mapping), dtype=np.int64)
    positives = matrix.sum(axis=0, dtype=np.float64)
    if rule == "largest":
        chosen = [min(mapping[p], key=lambda column: (-positives[column], column)) for p in positions]
        return positions, matrix[:, chosen][:, :, None].astype(np.float32)
    draw_ids = _draw_indices(draws)
    out = np.empty((matrix.shape[0], positions.size, draw_ids.size), dtype=np.float32)
    for slot_p, parent in enumerate(positions):
        children = np.asarray(mapping[parent])
        for slot_d, draw in enumerate(draw_ids):
            rng = np.random.default_rng([seed, STREAM_SEMANTIC, int(parent), int(draw)])
            if rule == "random_child":
                members = children[[rng.integers(children.size)]]
            else:
                members = _random_subset(rng, children, keep)
            out[:, slot_p, slot_d] = matrix[:, members].max(axis=1)
    return positions, out


#: Redraws of a random subset before it is drawn from its conditional law directly (a ``keep`` near 0 or 1).
SUBSET_TRIES = 64


def _random_subset(rng: np.random.Generator, children: np.ndarray, keep: float) -> np.ndarray:
    """Children kept with probability ``keep`` each, conditioned on non-empty and (for ≥ 2 children) not all.

    Drawn by redrawing up to :data:`SUBSET_TRIES` times; when every try fails (a ``keep`` so close to 0 or 1 that
    a proper subset is rare), from the same conditional law directly: a size k ∈ 1 … m − 1 with probability
    ∝ C(m, k)·keep^k·(1 − keep)^(m − k), then k children uniformly (every subset of one size is equally likely).
    Either way the subset has that law, and for a usual ``keep`` the first tries decide, as they always did.
    """
    m = children.size
    if m == 1:
        return children
    for _ in range(SUBSET_TRIES):
        mask = rng.random(m) < keep
        if 0 < mask.sum() < m:
            return children[mask]
    sizes = np.arange(1, m)  # log of C(m, k)·keep^k·(1 − keep)^(m − k) without the common factor m!
    log_weights = np.array([k * math.log(keep) + (m - k) * math.log1p(-keep) - math.lgamma(k + 1)
                            - math.lgamma(m - k + 1) for k in sizes.tolist()])
    weights = np.exp(log_weights - log_weights.max())
    size = int(rng.choice(sizes, p=weights / weights.sum()))
    return children[np.sort(rng.choice(m, size=size, replace=False))]

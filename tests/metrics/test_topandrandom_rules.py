"""Rules of the top-and-random sample and of its correlations (``neuroneval.metrics.topandrandom``), each against
an oracle written here from the documented rule (module docstring, ``help(score)``, :mod:`~neuroneval.metrics.streams`),
never against values read back from the module.

Pinned:

* the standard sample of unit k: the ``min(tr_n_top, pool)`` inputs of its top pool (the ``⌈tr_top_fraction·n⌉``
  largest activations, ties at the cutoff to the lower index) with the smallest keys in row k of stream
  ``[seed, 1]``, then the ``min(tr_n_random, n − n_top)`` other inputs with the smallest keys in row k of stream
  ``[seed, 2]``; each part ascending, no input twice. Also at the boundaries (pool smaller than ``tr_n_top``, pool
  = n, no top or no random input, every input), for any subset of units, any key block size, identical units;
* the reference-mode sample of a 0/1 unit: all its positives, then the ``min(tr_n_random, n)`` inputs with the
  smallest keys in row k of stream ``[seed, 5]`` (a positive may come twice), valid as a prefix of the row, the
  matrix as wide as the longest sample (``sample_width``); other units keep the standard sample;
* ``_top_pool`` and ``_smallest_keys`` equal a stable sort (crowded cutoffs, excluded keys, rows with too few
  candidates, exactly as many as places or one more, ``count`` = 0 or n, rows of thousands of candidates); with equal
  keys at the boundary, some valid choice;
* correlation_tr and spearman_tr equal ``scipy.stats.pearsonr``/``spearmanr`` on the brute-force sample (average
  mode: gathered float64 concepts, 0/1 closed forms, float32 tables, listed pairs, one concept per chunk, the torch
  backend); in reference mode the Pearson times (m − 1)/m on the m valid inputs, Spearman on stable ranks of the
  float32-noised values (unit noise stream 3, concept noise stream 4), 0/1 tables included;
* degenerate samples (constant unit, concept constant on the sample, p = 0 or p = s of a 0/1 concept, a constant
  row padded by the binary variant) score 0 and raise the zero-variance warning, and a call without one does not;
  a variance that underflows still gives a finite score; a sample with centred norm exactly 1 is scored normally;
  perfect (anti)correlation stays within [−1, 1] after rounding.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from neuroneval.metrics import METRICS, NeuronEvalWarning, score, score_pairs
from neuroneval.metrics import engine as engine_module
from neuroneval.metrics.backend import get_backend
from neuroneval.metrics.edgecases import Notes
from neuroneval.metrics.metric_options import engine_params
from neuroneval.metrics.topandrandom import _smallest_keys, _top_pool, sample_indices, sample_width

N = 300
ZERO_VARIANCE_NOTE = "zero-variance"


# ---------------------------------------------------------------------------------------------------- oracles


def pool_size(fraction: float, n: int) -> int:
    """⌈fraction·n⌉ (α·n rounded to 9 decimals first), between 1 and n."""
    return min(n, max(1, math.ceil(round(fraction * n, 9))))


def stream_row(seed: int, stream: int, row: int, width: int) -> np.ndarray:
    """Row ``row`` of ``default_rng([seed, stream]).random((∞, width))``."""
    return np.random.default_rng([seed, stream]).random((row + 1, width))[row]


def smallest(keys: np.ndarray, count: int) -> np.ndarray:
    """Positions of the ``count`` smallest keys, ascending."""
    return np.sort(np.argsort(keys, kind="stable")[:count])


def standard_sample(a: np.ndarray, unit: int, seed: int, fraction: float, tr_n_top: int,
                    tr_n_random: int) -> tuple[np.ndarray, np.ndarray]:
    """(top part, random part) of unit ``unit``'s sample, each ascending."""
    n = a.size
    pool = np.sort(np.argsort(-a, kind="stable")[:pool_size(fraction, n)])
    n_top = min(tr_n_top, pool.size)
    top = np.sort(pool[smallest(stream_row(seed, 1, unit, pool.size), n_top)])
    rest = np.setdiff1d(np.arange(n), top)
    keys = stream_row(seed, 2, unit, n)[rest]
    return top, np.sort(rest[np.argsort(keys, kind="stable")[:min(tr_n_random, n - n_top)]])


def is_binary(a: np.ndarray) -> bool:
    """Whether every activation is exactly 0 or 1."""
    return bool(np.all((a == 0) | (a == 1)))


def expected_sample(a: np.ndarray, unit: int, ties: str, seed: int = 0, tr_top_fraction: float = 0.002,
                    tr_n_top: int = 25, tr_n_random: int = 25) -> np.ndarray:
    """The inputs of unit ``unit``'s sample in order (binary variant for 0/1 units in reference mode)."""
    if ties == "reference" and is_binary(a):
        extra = smallest(stream_row(seed, 5, unit, a.size), min(tr_n_random, a.size))
        return np.concatenate([np.flatnonzero(a == 1), extra])
    return np.concatenate(standard_sample(a, unit, seed, tr_top_fraction, tr_n_top, tr_n_random))


def stable_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1…m, equal values ordered by position."""
    ranks = np.empty(x.size)
    ranks[np.argsort(x, kind="stable")] = np.arange(1, x.size + 1)
    return ranks


def noised(x: np.ndarray, seed: int, stream: int, row: int) -> np.ndarray:
    """float32(x) + float32(1e-7)·U, U the float32 row ``row`` of stream ``[seed, stream]``."""
    noise = stream_row(seed, stream, row, x.size).astype(np.float32)
    return x.astype(np.float32) + np.float32(1e-7) * noise


def oracle_scores(metric: str, activations: np.ndarray, concepts: np.ndarray, pairs: np.ndarray, ties: str,
                  options: dict) -> np.ndarray:
    """scipy on each pair's brute-force sample; 0 on a constant sample; reference: ×(m − 1)/m, noised ranks."""
    out = np.empty(len(pairs))
    for i, (k, t) in enumerate(pairs):
        sample = expected_sample(activations[:, k], k, ties, **options)
        a, c = activations[sample, k], concepts[sample, t]
        factor = (sample.size - 1) / sample.size if ties == "reference" else 1.0
        if ties == "reference" and metric == "spearman_tr":
            seed = options.get("seed", 0)
            a = stable_ranks(noised(activations[:, k], seed, 3, k)[sample])
            c = stable_ranks(noised(concepts[:, t], seed, 4, t)[sample])
        if np.all(a == a[0]) or np.all(c == c[0]):
            out[i] = 0.0
            continue
        oracle = stats.spearmanr if metric == "spearman_tr" and ties == "average" else stats.pearsonr
        out[i] = factor * oracle(a, c).statistic
    return out


def all_pairs(units: int, concepts: int) -> np.ndarray:
    """Every (unit, concept) pair, unit-major (the order of ``score(...).ravel()``)."""
    return np.array([(k, t) for k in range(units) for t in range(concepts)])


# ---------------------------------------------------------------------------------------------------- data


def unit_table(rng: np.random.Generator, n: int = N) -> np.ndarray:
    """Twelve units: ties, ReLU, constant 0.7 (its float mean is not 0.7), 0/1, tied top, distinct, 3-valued
    non-0/1 ({0, ½, 1}, {−1, 0, 1}, {0, 1, 2}), 0/1 without positive, with many positives, with one."""
    z = rng.standard_normal((n, 4))
    one = np.zeros(n)
    one[rng.integers(n)] = 1.0
    return np.column_stack([
        np.round(z[:, 0], 1),
        np.maximum(np.round(z[:, 1], 2), 0.0),
        np.full(n, 0.7),
        (rng.random(n) < 0.2).astype(float),
        np.minimum(np.round(z[:, 2], 1), 1.0),
        z[:, 3],
        rng.integers(0, 3, n) / 2.0,
        rng.integers(-1, 2, n).astype(float),
        rng.integers(0, 3, n).astype(float),
        np.zeros(n),
        (rng.random(n) < 0.7).astype(float),
        one,
    ])


def concept_table(rng: np.random.Generator, n: int = N) -> np.ndarray:
    """Rounded probabilities (ties), 0/1 at 0.3 and 0.5, 3 positives, all 0, all 1, constant 0.3, skewed."""
    rare = np.zeros(n)
    rare[rng.choice(n, 3, replace=False)] = 1.0
    return np.column_stack([np.round(rng.random(n), 1), (rng.random(n) < 0.3).astype(float),
                            (rng.random(n) < 0.5).astype(float), rare, np.zeros(n), np.ones(n), np.full(n, 0.3),
                            rng.random(n) ** 3])


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    """(activations (300, 12), concepts (300, 8))."""
    rng = np.random.default_rng(20240611)
    return unit_table(rng), concept_table(rng)


def context(activations: np.ndarray, units: np.ndarray | None = None, ties: str = "average",
            work_elements: int | None = None, **options) -> engine_module.Context:
    """A numpy-backend context for ``units`` (all by default) with the given T&R options."""
    params = engine_params(METRICS["correlation_tr"].options(ties=ties, **options))[0]
    rows = np.arange(activations.shape[1]) if units is None else np.asarray(units)
    extra = {} if work_elements is None else {"work_elements": work_elements}
    return engine_module.Context(get_backend(None), params, Notes("correlation_tr"), activations,
                                 np.zeros((activations.shape[0], 1)), rows, **extra)


def quiet(function, *args, **kwargs):
    """``function(*args, **kwargs)`` with NeuronEvalWarnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NeuronEvalWarning)
        return function(*args, **kwargs)


def zero_variance_warned(function, *args, **kwargs) -> tuple[np.ndarray, bool]:
    """The result and whether a zero-variance NeuronEvalWarning was raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NeuronEvalWarning)
        result = np.asarray(function(*args, **kwargs))
    return result, any(ZERO_VARIANCE_NOTE in str(w.message) for w in caught
                       if issubclass(w.category, NeuronEvalWarning))


# ---------------------------------------------------------------------------------------------------- samples

STANDARD = [
    {"tr_top_fraction": 0.1, "tr_n_top": 25, "tr_n_random": 25, "seed": 3},
    {"tr_top_fraction": 0.5, "tr_n_top": 10, "tr_n_random": 25, "seed": 4},
    {"tr_top_fraction": 0.05, "tr_n_top": 25, "tr_n_random": 25, "seed": 5},
    {"tr_top_fraction": 1.0, "tr_n_top": 25, "tr_n_random": 25, "seed": 6},
    {"tr_top_fraction": 0.1, "tr_n_top": 4, "tr_n_random": 0, "seed": 7},
    {"tr_top_fraction": 0.1, "tr_n_top": 0, "tr_n_random": 7, "seed": 8},
    {"tr_top_fraction": 0.5, "tr_n_top": 100, "tr_n_random": 1000, "seed": 9},
    {"seed": 10},
]


@pytest.mark.parametrize("options", STANDARD)
def test_standard_sample_is_top_keys_then_random_keys(options: dict, data) -> None:
    """Average mode: every unit (0/1 ones too) takes the standard sample, top part then random part, no repeat."""
    activations, _ = data
    ctx = context(activations, **options)
    index, valid = sample_indices(activations, ctx.unit_rows, ctx)
    parts = [standard_sample(activations[:, k], k, options["seed"], options.get("tr_top_fraction", 0.002),
                             options.get("tr_n_top", 25), options.get("tr_n_random", 25))
             for k in range(activations.shape[1])]
    width = sum(part.size for part in parts[0])
    assert index.shape == valid.shape == (activations.shape[1], width)
    assert index.dtype == np.int64 and valid.dtype == bool and valid.all()
    for k, (top, random) in enumerate(parts):
        np.testing.assert_array_equal(index[k], np.concatenate([top, random]), err_msg=f"unit {k}")
        assert np.unique(index[k]).size == width
    assert sample_width(ctx) == width


def test_sample_boundaries_pool_whole_and_every_input(data) -> None:
    """A pool smaller than tr_n_top is taken whole; tr_n_top + tr_n_random ≥ n gives every input once."""
    activations, _ = data
    ctx = context(activations, tr_top_fraction=0.05, tr_n_top=25, tr_n_random=0, seed=1)
    index, _ = sample_indices(activations, ctx.unit_rows, ctx)
    assert index.shape[1] == 15
    for k in range(activations.shape[1]):
        np.testing.assert_array_equal(index[k], np.sort(np.argsort(-activations[:, k], kind="stable")[:15]))
    ctx = context(activations, tr_top_fraction=0.2, tr_n_top=10, tr_n_random=N - 10, seed=2)
    index, _ = sample_indices(activations, ctx.unit_rows, ctx)
    assert index.shape[1] == N
    assert all(np.array_equal(np.sort(row), np.arange(N)) for row in index)


def test_sample_rows_depend_only_on_seed_and_unit(data) -> None:
    """A unit's sample is row k of the streams: the same in any subset of units and for any key block size,
    reproducible from the seed, and different for another seed or another unit with identical activations."""
    activations, _ = data
    options = {"tr_top_fraction": 0.1, "tr_n_top": 10, "tr_n_random": 30, "seed": 12}
    whole = sample_indices(activations, np.arange(12), context(activations, **options))[0]
    units = np.array([10, 3, 7])
    for work_elements in (None, 1, 40):
        ctx = context(activations, units=units, work_elements=work_elements, **options)
        np.testing.assert_array_equal(sample_indices(activations, units, ctx)[0], whole[units])
    again = sample_indices(activations, np.arange(12), context(activations, **options))[0]
    np.testing.assert_array_equal(again, whole)
    other = sample_indices(activations, np.arange(12), context(activations, **{**options, "seed": 13}))[0]
    assert all(not np.array_equal(other[k], whole[k]) for k in (0, 1, 5))
    twins = np.column_stack([activations[:, 5], activations[:, 5]])
    pair = sample_indices(twins, np.arange(2), context(twins, **options))[0]
    assert not np.array_equal(pair[0], pair[1])
    for k in range(2):
        np.testing.assert_array_equal(pair[k], np.concatenate(standard_sample(twins[:, k], k, 12, 0.1, 10, 30)))


BINARY = [
    {"tr_top_fraction": 0.1, "tr_n_top": 25, "tr_n_random": 25, "seed": 3},
    {"tr_top_fraction": 0.1, "tr_n_top": 2, "tr_n_random": 0, "seed": 4},
    {"tr_top_fraction": 0.1, "tr_n_top": 25, "tr_n_random": 1000, "seed": 5},
    {"tr_top_fraction": 0.1, "tr_n_top": 0, "tr_n_random": 7, "seed": 6},
]


@pytest.mark.parametrize("units", [None, [9, 2, 6], [11, 8, 3, 0], [10]])
@pytest.mark.parametrize("options", BINARY)
def test_reference_binary_units_take_all_positives_then_random_inputs(options: dict, units, data) -> None:
    """Reference mode: a 0/1 unit's valid inputs are its positives then tr_n_random inputs of stream 5 (the
    positives may repeat), as a prefix of its row; other units keep the standard sample; the matrix is as wide
    as the longest sample."""
    activations, _ = data
    rows = np.arange(activations.shape[1]) if units is None else np.asarray(units)
    ctx = context(activations, units=rows, ties="reference", **options)
    index, valid = sample_indices(activations, rows, ctx)
    samples = [expected_sample(activations[:, k], k, "reference", **options) for k in rows]
    width = max(sample.size for sample in samples)
    assert index.shape == valid.shape == (rows.size, width)
    for row, (k, sample) in enumerate(zip(rows, samples, strict=True)):
        np.testing.assert_array_equal(valid[row], np.arange(width) < sample.size, err_msg=f"unit {k}")
        np.testing.assert_array_equal(index[row, :sample.size], sample, err_msg=f"unit {k}")
    assert sample_width(ctx) == width


def test_reference_positives_may_repeat(data) -> None:
    """The binary variant draws its random inputs from all n, so a positive can be in the sample twice."""
    activations, _ = data
    ctx = context(activations, units=[10], ties="reference", tr_n_random=60, seed=2)
    index, valid = sample_indices(activations, np.array([10]), ctx)
    sample = index[0][valid[0]]
    assert sample.size == int(activations[:, 10].sum()) + 60
    assert np.unique(sample).size < sample.size


# ---------------------------------------------------------------------------------------------------- selections


def test_top_pool_is_a_stable_top_with_ties_to_the_lower_index() -> None:
    """Rows with crowded cutoffs (all tied, a tied block, spread ties), pools from 1 to n, more rows than inputs."""
    rng = np.random.default_rng(11)
    values = np.round(rng.standard_normal((9, 200)), 1)
    values[1] = 0.0
    values[2, :40] = 5.0
    values[3, ::3] = 5.0
    values[4] = np.round(values[4], 0)
    values[5, 150:] = 7.0
    for pool in (1, 3, 9, 10, 40, 57, 199, 200):
        expected = np.sort(np.argsort(-values, axis=1, kind="stable")[:, :pool], axis=1)
        np.testing.assert_array_equal(_top_pool(values, pool), expected, err_msg=f"pool {pool}")
    tall = np.round(rng.standard_normal((12, 5)), 0)
    for pool in (1, 2, 5):
        expected = np.sort(np.argsort(-tall, axis=1, kind="stable")[:, :pool], axis=1)
        np.testing.assert_array_equal(_top_pool(tall, pool), expected)


def expected_smallest(keys: np.ndarray, count: int) -> np.ndarray:
    return np.sort(np.argsort(keys, axis=1, kind="stable")[:, :count], axis=1)


def test_smallest_keys_equal_a_stable_sort() -> None:
    """Uniform keys with excluded inputs (2.0), on the candidate path and the whole-row path, count 0 … n; rows of
    thousands of candidates (a short row's partition may sort it whole) and counts beyond 512."""
    rng = np.random.default_rng(12)
    for rows, n, count in [(7, 1000, 25), (5, 1000, 1), (6, 400, 49), (6, 400, 50), (4, 60, 25), (3, 50, 0),
                           (4, 30, 30), (3, 31, 30), (5, 2000, 250), (4, 20_000, 250), (2, 5000, 600)]:
        keys = rng.random((rows, n))
        keys[:, rng.choice(n, n // 10, replace=False)] = 2.0
        np.testing.assert_array_equal(_smallest_keys(keys, count), expected_smallest(keys, count),
                                      err_msg=f"{rows, n, count}")


@pytest.mark.parametrize(("n", "count"), [(1000, 10), (10_000, 300)])
def test_smallest_keys_rows_with_few_candidates_and_exactly_enough(n: int, count: int) -> None:
    """Keys below 4·count/n are the candidates: rows with fewer than count fall back to the whole row; a block
    whose widest row has exactly count candidates, or one more, is still exact (count below and above 256)."""
    rng = np.random.default_rng(13)
    low = 4.0 * count / n
    for found in ([count, 3, count, 0], [3 * count, 5, count + 1, count - 1], [count, count], [count + 1, count, 2],
                  [3, 1]):
        keys = low + (1.0 - low) * rng.random((len(found), n))
        excluded = rng.choice(n, 5, replace=False)
        keys[:, excluded] = 2.0
        allowed = np.setdiff1d(np.arange(n), excluded)
        for row, size in enumerate(found):
            keys[row, rng.choice(allowed, size, replace=False)] = low * rng.random(size)
        assert list((keys < low).sum(axis=1)) == found
        np.testing.assert_array_equal(_smallest_keys(keys, count), expected_smallest(keys, count),
                                      err_msg=str(found))


@pytest.mark.parametrize(("rows", "n", "count", "seed"), [(60, 4000, 100, 8), (40, 10_000, 250, 0)])
def test_smallest_keys_on_many_rows_of_candidates(rows: int, n: int, count: int, seed: int) -> None:
    """Many rows of about 4·count candidates each: the count smallest, not just the count − 1 smallest and one more
    (these seeds have a row where a partition at count − 2 leaves another key at place count)."""
    rng = np.random.default_rng(seed)
    keys = rng.random((rows, n))
    keys[:, rng.choice(n, n // 10, replace=False)] = 2.0
    np.testing.assert_array_equal(_smallest_keys(keys, count), expected_smallest(keys, count))


def test_smallest_keys_with_equal_keys_at_the_boundary_pick_a_valid_set() -> None:
    """Equal keys at the count-th place: any of them may be taken, but the set is count distinct positions,
    ascending, none with a key above one left out."""
    rng = np.random.default_rng(14)
    keys = np.round(rng.random((8, 1000)), 2) * 0.1
    for count in (1, 7, 10, 33):
        chosen = _smallest_keys(keys, count)
        assert chosen.shape == (8, count)
        for row in range(8):
            assert np.all(np.diff(chosen[row]) > 0)
            left = np.setdiff1d(np.arange(1000), chosen[row])
            assert keys[row, chosen[row]].max() <= keys[row, left].min()


# ---------------------------------------------------------------------------------------------------- scores

SCORE_OPTIONS = {"tr_top_fraction": 0.1, "tr_n_top": 20, "tr_n_random": 31, "seed": 21}  # s = 51, odd


@pytest.mark.parametrize("metric", ["correlation_tr", "spearman_tr"])
@pytest.mark.parametrize("path", ["gathered", "closed_form", "float32", "listed", "chunked"])
def test_average_mode_equals_scipy_on_the_sample(metric: str, path: str, data) -> None:
    """Average mode, every kernel path: scipy's Pearson (Spearman) on the brute-force sample, 0 when constant."""
    activations, concepts = data
    if path == "closed_form":
        concepts = concepts[:, 1:6]
    elif path == "float32":
        concepts = np.round(concepts, 2).astype(np.float32)
    pairs = all_pairs(activations.shape[1], concepts.shape[1])
    if path == "listed":
        pairs = pairs[np.random.default_rng(3).permutation(len(pairs))[:70]]
        got = quiet(score_pairs, metric, activations, concepts, pairs, **SCORE_OPTIONS)
    else:
        chunk = {"chunk_size": 1} if path == "chunked" else {}
        got = quiet(score, metric, activations, concepts, **SCORE_OPTIONS, **chunk).ravel()
    expected = oracle_scores(metric, activations, concepts.astype(np.float64), pairs, "average", SCORE_OPTIONS)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("metric", ["correlation_tr", "spearman_tr"])
@pytest.mark.parametrize("path", ["all", "listed", "float32", "binary_table"])
def test_reference_mode_equals_the_authors_rule_on_the_sample(metric: str, path: str, data) -> None:
    """Reference mode: Pearson × (m − 1)/m on the m valid inputs (binary variant for 0/1 units); Spearman on
    stable ranks of x + 1e-7·U (float32, unit noise stream 3, concept noise stream 4)."""
    activations, concepts = data
    options = {**SCORE_OPTIONS, "ties": "reference"}
    if path == "float32":
        concepts = np.round(concepts, 1).astype(np.float32)
    elif path == "binary_table":
        concepts = concepts[:, 1:6]
    pairs = all_pairs(activations.shape[1], concepts.shape[1])
    if path == "listed":
        pairs = pairs[np.random.default_rng(4).permutation(len(pairs))[:70]]
        got = quiet(score_pairs, metric, activations, concepts, pairs, **options)
    else:
        got = quiet(score, metric, activations, concepts, **options).ravel()
    expected = oracle_scores(metric, activations, concepts.astype(np.float64), pairs, "reference", SCORE_OPTIONS)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def degenerate_case(case: str, activations: np.ndarray) -> tuple[np.ndarray, np.ndarray, str]:
    """(units, concepts, ties) of a call whose only degenerate pair is of the kind ``case``."""
    rng = np.random.default_rng(31)
    normal = activations[:, [0, 5]]
    sample = expected_sample(normal[:, 1], 1, "average", **SCORE_OPTIONS)
    outside = np.setdiff1d(np.arange(N), np.concatenate(
        [expected_sample(normal[:, k], k, "average", **SCORE_OPTIONS) for k in range(2)]))[:2]
    half = (rng.random(N) < 0.5).astype(float)
    if case == "constant_unit":
        return np.column_stack([normal, activations[:, 2]]), half[:, None], "average"
    if case == "no_positive_in_sample":
        concept = np.zeros(N)
        concept[outside] = 1.0
        return normal, np.column_stack([half, concept]), "average"
    if case == "all_positive_in_sample":
        concept = np.ones(N)
        concept[outside] = 0.0
        return normal, np.column_stack([half, concept]), "average"
    if case == "constant_concept_on_sample":
        concept = np.round(rng.random(N), 2)
        concept[sample] = 0.3
        return normal, np.column_stack([np.round(rng.random(N), 2), concept]), "average"
    if case == "constant_unit_no_positive":
        return activations[:, [2]], np.zeros((N, 1)), "average"
    if case == "constant_unit_gathered":
        return np.column_stack([normal, activations[:, 2]]), np.round(rng.random((N, 2)), 2), "average"
    if case == "reference_zero_unit":
        return activations[:, [5, 9, 10]], np.round(rng.random((N, 2)), 2), "reference"
    if case == "reference_padded_constant":
        units = np.column_stack([activations[:, [5, 10]], np.full(N, -0.7)])
        return units, np.round(rng.random((N, 2)), 2), "reference"
    return normal, np.column_stack([half, np.round(rng.random(N), 2)]), "average"


CASES = ["constant_unit", "constant_unit_no_positive", "no_positive_in_sample", "all_positive_in_sample",
         "constant_concept_on_sample", "constant_unit_gathered", "reference_zero_unit", "reference_padded_constant",
         "none"]


@pytest.mark.parametrize(("metric", "case"), [(metric, case) for case in CASES
                                               for metric in ("correlation_tr", "spearman_tr")
                                               if metric == "correlation_tr" or not case.startswith("reference")])
def test_degenerate_samples_score_zero_with_one_warning(metric: str, case: str, data) -> None:
    """Each degenerate kind alone scores 0 and warns (zero variance on the sample); a call without one does not.
    (Reference-mode Spearman ranks noised values, which are never constant.)"""
    activations, _ = data
    units, concepts, ties = degenerate_case(case, activations)
    options = {**SCORE_OPTIONS, "ties": ties}
    got, warned = zero_variance_warned(score, metric, units, concepts, **options)
    expected = oracle_scores(metric, units, concepts, all_pairs(units.shape[1], concepts.shape[1]), ties,
                             SCORE_OPTIONS).reshape(got.shape)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    assert warned == (case != "none")
    assert (got == 0.0).any() == (case != "none")


@pytest.mark.parametrize("metric", ["correlation_tr", "spearman_tr"])
def test_an_empty_reference_sample_scores_a_positive_zero_with_the_note(metric: str) -> None:
    """Reference mode without random inputs: a 0/1 unit without positives has an empty sample. It is constant, so
    it scores +0.0 with the zero-variance note (no NaN, no division warning), beside a unit that scores normally."""
    n = 100
    units = np.column_stack([np.zeros(n), (np.arange(n) % 3 == 0).astype(float)])
    concepts = np.linspace(0.0, 1.0, n)[:, None]
    got, warned = zero_variance_warned(score, metric, units, concepts, ties="reference", tr_n_top=2, tr_n_random=0)
    assert warned
    assert got[0, 0] == 0.0 and not np.signbit(got[0, 0])
    assert np.isfinite(got).all()


@pytest.mark.parametrize("metric", ["correlation_tr", "spearman_tr"])
@pytest.mark.parametrize("binary", [True, False])
def test_underflowing_variance_gives_a_finite_score(metric: str, binary: bool, data) -> None:
    """A unit whose centred squares underflow (spread 1e-200) still scores a finite value in [−1, 1]."""
    activations, concepts = data
    units = np.column_stack([activations[:, 5], 1e-200 * activations[:, 5], 1e-200 * activations[:, 0]])
    table = concepts[:, 1:3] if binary else concepts[:, [0, 7]]
    got = quiet(score, metric, units, table, **SCORE_OPTIONS)
    assert np.all(np.isfinite(got)) and np.all(np.abs(got) <= 1.0)


@pytest.mark.parametrize(("seed", "table", "metric"), [(3, "gathered", "correlation_tr"),
                                                       (3, "binary", "correlation_tr"),
                                                       (5, "binary", "spearman_tr")])
def test_perfect_correlation_is_clipped_to_one(seed: int, table: str, metric: str) -> None:
    """A unit equal to a concept (or its negation) scores ±1; rounding never takes a score outside [−1, 1]."""
    rng = np.random.default_rng(seed)
    c0, c2 = np.round(rng.random(N), 2), rng.random(N)
    b1, b3 = (rng.random(N) < 0.3).astype(float), (rng.random(N) < 0.5).astype(float)
    units = np.column_stack([c0, b1, c2, b3, -c0, -c2])
    if table == "gathered":
        concepts, same = np.column_stack([c0, c2, rng.random(N)]), [(0, 0, 1), (2, 1, 1), (4, 0, -1), (5, 1, -1)]
    else:
        concepts, same = np.column_stack([b1, 1 - b1, b3, 1 - b3]), [(1, 0, 1), (1, 1, -1), (3, 2, 1), (3, 3, -1)]
    got = quiet(score, metric, units, concepts, seed=seed, tr_top_fraction=0.1)
    assert np.all(np.abs(got) <= 1.0)
    for k, t, sign in same:
        assert got[k, t] == pytest.approx(sign, abs=1e-12)


@pytest.mark.parametrize("path", ["gathered", "closed_form", "listed"])
def test_sample_with_unit_norm_is_scored_normally(path: str) -> None:
    """A sample {1, 1, 0, 0} has centred norm exactly 1: a unit equal to its concept still scores 1."""
    rng = np.random.default_rng(41)
    unit = np.zeros(N)
    unit[rng.choice(N, 2, replace=False)] = 1.0
    activations = np.column_stack([unit, np.round(rng.standard_normal(N), 1)])
    concepts = np.column_stack([unit, (rng.random(N) < 0.5).astype(float), np.round(rng.random(N), 2)])
    if path == "closed_form":
        concepts = concepts[:, :2]
    options = {"tr_top_fraction": 2 / N, "tr_n_top": 2, "tr_n_random": 2, "seed": 1}
    pairs = all_pairs(2, concepts.shape[1])
    if path == "listed":
        got = quiet(score_pairs, "correlation_tr", activations, concepts, pairs, **options)
    else:
        got = quiet(score, "correlation_tr", activations, concepts, **options).ravel()
    np.testing.assert_allclose(got, oracle_scores("correlation_tr", activations, concepts, pairs, "average", options),
                               rtol=0, atol=1e-12)
    assert got[0] == 1.0


@pytest.mark.parametrize("ties", ["average", "reference"])
def test_torch_backend_equals_the_oracle_on_a_float32_table(ties: str, data) -> None:
    """The torch backend (CPU) takes the gathers, not the numpy-only float32 row reads, with the same scores."""
    pytest.importorskip("torch")
    activations, concepts = data
    table = np.round(concepts, 2).astype(np.float32)
    pairs = all_pairs(activations.shape[1], table.shape[1])
    for metric in ("correlation_tr", "spearman_tr"):
        got = quiet(score, metric, activations, table, device="cpu", ties=ties, **SCORE_OPTIONS).ravel()
        expected = oracle_scores(metric, activations, table.astype(np.float64), pairs, ties, SCORE_OPTIONS)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9)

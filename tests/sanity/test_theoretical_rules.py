"""Rules of the theoretical Missing/Extra Labels test (``neuroneval.sanity.theoretical``) against independent oracles.

Pinned here:

* argument checks one boundary at a time: draws = 0 refused and 1 accepted, n = 1 refused and 2 accepted, positive
  counts of 1 and n − 1 accepted, 0, n and more refused, ``workers`` refused when a bool, 0, a float or a string;
  each error names the bad argument, and an unknown metric is reported before any other bad argument;
* keyword-only arguments after ``metrics`` and the documented defaults (n = 50,000, 100 draws, seed 0, one worker, a
  progress bar, the paper's constants);
* the per-test strengths: ``keep`` drives only the missing-labels test and ``multiplier`` only the extra-labels
  test, each falling back to the paper's default when ``None``, both in the Δs_d and in the ``strength`` column;
* Δs_d of recall and precision per γ column and draw against a brute force built from the documented seeding of
  the perturbations (``default_rng([seed, stream, γ index, draw])``), for any ``chunk_draws``;
* the observed span of MAD and WPMI (``max − min`` over the γ × γ scores of every ideal unit against the original
  concepts and the first draw of c⁻ and c⁺), recomputed one unit column at a time;
* the default chunk of draws: the largest whose float32 (n × D) block fits in 32 MiB (``2**23 // n`` draws), which
  fixes the reference-mode tie noise and so the reproducible numbers;
* ``seconds``: the ``perf_counter`` time between the start and the end of the scoring, the same on every row.
"""

from __future__ import annotations

import inspect
import time

import numpy as np
import pandas as pd
import pytest

import neuroneval.progress
from neuroneval.metrics import score
from neuroneval.sanity import theoretical
from neuroneval.sanity.theoretical import positive_counts, theoretical_deltas, theoretical_test

SMALL = {"gammas": (0.3,), "n": 100, "draws": 2, "progress": False}
GAMMAS = (0.3, 0.05, 0.2)  # three columns with different counts: odd and even column indices both matter


def _ideal(s: int, n: int) -> np.ndarray:
    """The ideal binary concept with its first s of n inputs positive."""
    return (np.arange(n) < s).astype(np.float64)


def _perturbed(test: str, s: int, n: int, *, seed: int, column: int, draw: int, strength: float) -> np.ndarray:
    """c⁻ (Eq. 9) or c⁺ (Eq. 12) of the ideal concept from the documented uniforms of (seed, stream, column, draw)."""
    uniforms = np.random.default_rng([seed, 1 if test == "missing" else 2, column, draw]).random(n)
    concept = _ideal(s, n)
    if test == "missing":
        return concept * (uniforms > 1.0 - strength)
    return np.minimum(1.0, concept + (uniforms < min(1.0, (strength - 1.0) * (s / (n - s)))))


# --- argument checks ------------------------------------------------------------------------------------------


def test_one_draw_and_two_inputs_are_the_smallest_accepted_sizes() -> None:
    """draws = 1 and n = 2 (one positive of two inputs) are valid runs of the right shape."""
    deltas, _ = theoretical_deltas(["recall"], gammas=(0.3,), n=100, draws=1, progress=False)
    assert {key: values.shape for key, values in deltas.items()} == {("recall", 0, "missing"): (1,),
                                                                     ("recall", 0, "extra"): (1,)}
    deltas, _ = theoretical_deltas(["recall", "precision"], gammas=(0.5,), n=2, draws=3, progress=False)
    assert all(values.shape == (3,) and np.isfinite(values).all() for values in deltas.values())
    # n = 2, s = 1: c⁺ turns the one negative positive (q = 1), so precision halves in every draw.
    np.testing.assert_array_equal(deltas[("precision", 0, "extra")], [-0.5, -0.5, -0.5])


@pytest.mark.parametrize(("options", "message"), [({"draws": 0}, "draws=0"), ({"draws": -3}, "draws=-3"),
                                                  ({"n": 1, "gammas": (0.5,)}, "n=1")])
def test_too_few_draws_or_inputs_are_refused_alone(options: dict, message: str) -> None:
    """Each size is checked on its own (the other one valid), and the message gives the bad value."""
    with pytest.raises(ValueError, match=f"need draws ≥ 1 and n ≥ 2.*{message}"):
        theoretical_deltas(["recall"], **(SMALL | options))


def test_positive_counts_allow_1_to_n_minus_1() -> None:
    """γ·n must round to 1 … n − 1 positives: both ends accepted, 0, n and more refused."""
    assert positive_counts((0.001,), 1_000).tolist() == [1]
    assert positive_counts((0.999,), 1_000).tolist() == [999]
    assert positive_counts((0.5,), 2).tolist() == [1]
    for gammas in ((0.0004,), (1.0,), (1.5,), (0.3, 1.0)):
        with pytest.raises(ValueError, match="1 … n − 1 positives"):
            positive_counts(gammas, 1_000)
    with pytest.raises(ValueError, match="positives"):  # through the runner too: a count equal to n
        theoretical_deltas(["recall"], **(SMALL | {"gammas": (1.0,)}))


@pytest.mark.parametrize("workers", [True, False, 0, -1, 2.0, 1.0, "2"])
def test_workers_must_be_a_positive_int(workers: object) -> None:
    """A bool, a non-positive int, a float or a string is refused by name (one task: no pool would start)."""
    with pytest.raises(ValueError, match="workers must be a positive integer"):
        theoretical_deltas(["recall"], gammas=(0.3,), n=100, draws=1, tests=("missing",), workers=workers,
                           progress=False)


@pytest.mark.parametrize("bad", [{"draws": 0}, {"workers": 0}, {"gammas": (0.0001,)}])
def test_an_unknown_metric_is_reported_before_other_bad_arguments(bad: dict) -> None:
    """The metric names are checked first, so a typo is reported as such whatever else is wrong."""
    with pytest.raises(ValueError, match="unknown metric 'no_such_metric'"):
        theoretical_deltas(["recall", "no_such_metric"], **(SMALL | bad))


def test_arguments_after_metrics_are_keyword_only() -> None:
    """``metrics`` may be passed by name; everything after it only by name."""
    by_name, _ = theoretical_deltas(metrics=["recall"], **SMALL)
    by_position, _ = theoretical_deltas(["recall"], **SMALL)
    assert by_name.keys() == by_position.keys()
    table = theoretical_test(metrics=["recall"], **SMALL)
    assert table["metric"].tolist() == ["recall", "recall"]
    for function in (theoretical_deltas, theoretical_test):
        with pytest.raises(TypeError):
            function(["recall"], (0.3,), n=100, draws=2, progress=False)


# --- documented defaults --------------------------------------------------------------------------------------


def test_documented_defaults() -> None:
    """n = 50,000, 100 draws, seed 0, one worker and a progress bar (theoretical_test's docstring, shared)."""
    documented = {"n": 50_000, "draws": 100, "seed": 0, "workers": 1, "progress": True, "ties": "reference",
                  "keep": None, "multiplier": None, "chunk_draws": None, "device": None, "lam": 1.0,
                  "gammas": (0.499, 0.1, 0.01, 0.001, 0.0001), "tests": ("missing", "extra")}
    for function in (theoretical_deltas, theoretical_test):
        parameters = inspect.signature(function).parameters
        assert {name: parameters[name].default for name in documented} == documented, function.__name__
    assert inspect.signature(theoretical_test).parameters["epsilon"].default == 1e-3


def test_paper_constants() -> None:
    """App. C: n = 500,000 inputs, 1,000 draws, γ = 0.499 … 0.0001, WPMI's λ = 1."""
    assert theoretical.PAPER_N == 500_000
    assert theoretical.PAPER_DRAWS == 1_000
    assert theoretical.PAPER_GAMMAS == (0.499, 0.1, 0.01, 0.001, 0.0001)
    assert theoretical.PAPER_LAM == 1.0


def test_seed_defaults_to_zero() -> None:
    """Omitting ``seed`` gives the seed-0 table, not another seed's."""
    kwargs = {"gammas": (0.3,), "n": 200, "draws": 3, "progress": False}
    default = theoretical_test(["recall", "precision"], **kwargs).drop(columns="seconds")
    pd.testing.assert_frame_equal(default, theoretical_test(["recall", "precision"], seed=0, **kwargs)
                                  .drop(columns="seconds"))
    assert not default.equals(theoretical_test(["recall", "precision"], seed=1, **kwargs).drop(columns="seconds"))


@pytest.mark.parametrize("function", [theoretical_deltas, theoretical_test])
def test_progress_bar_is_shown_by_default(function, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Without ``progress`` a bar labelled "theoretical test" goes to stderr; ``progress=False`` prints nothing."""
    monkeypatch.setattr(neuroneval.progress, "DELAY_S", 0.0)  # show the bar at once, not after 2 s
    function(["recall"], gammas=(0.3,), n=100, draws=2)
    assert "theoretical test" in capsys.readouterr().err
    function(["recall"], gammas=(0.3,), n=100, draws=2, progress=False)
    assert "theoretical test" not in capsys.readouterr().err


# --- strengths and per-column draws against a brute force ------------------------------------------------------


@pytest.mark.parametrize(("keep", "multiplier"), [(0.3, None), (None, 3.0), (0.75, 1.5), (None, None)])
@pytest.mark.parametrize("chunk_draws", [None, 1, 2])
def test_deltas_match_a_per_column_brute_force(keep: float | None, multiplier: float | None,
                                               chunk_draws: int | None) -> None:
    """Δs_d of recall and precision per γ column and draw, each test using its own strength (default when None).

    The ideal unit a = c is binarized to its s positives, so recall(a, c⁻) = |c⁻| / s and precision(a, c⁺) =
    s / |c⁺| while the other two scores stay 1; the spans are 1 and s(a, c) = 1.
    """
    n, seed, draws = 400, 4, 3
    deltas, spans = theoretical_deltas(["recall", "precision"], gammas=GAMMAS, n=n, draws=draws, seed=seed,
                                       keep=keep, multiplier=multiplier, chunk_draws=chunk_draws, progress=False)
    assert spans == {"recall": 1.0, "precision": 1.0}
    r_minus = 0.5 if keep is None else keep
    r_plus = 2.0 if multiplier is None else multiplier
    for column, gamma in enumerate(GAMMAS):
        s = round(gamma * n)
        kept = np.array([_perturbed("missing", s, n, seed=seed, column=column, draw=d, strength=r_minus).sum()
                         for d in range(draws)])
        grown = np.array([_perturbed("extra", s, n, seed=seed, column=column, draw=d, strength=r_plus).sum()
                          for d in range(draws)])
        assert (kept > 0).all()
        np.testing.assert_allclose(deltas[("recall", column, "missing")], kept / s - 1, rtol=0, atol=1e-12)
        np.testing.assert_allclose(deltas[("precision", column, "extra")], s / grown - 1, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(deltas[("precision", column, "missing")], np.zeros(draws))
        np.testing.assert_array_equal(deltas[("recall", column, "extra")], np.zeros(draws))


@pytest.mark.parametrize(("keep", "multiplier", "expected"), [(None, None, [0.5, 2.0]), (0.3, None, [0.3, 2.0]),
                                                              (None, 3.0, [0.5, 3.0]), (0.75, 1.5, [0.75, 1.5])])
def test_strength_column_reports_each_tests_own_strength(keep: float | None, multiplier: float | None,
                                                         expected: list[float]) -> None:
    """``strength`` is r₋ on missing rows and r₊ on extra rows, the paper's default where not given."""
    table = theoretical_test(["recall"], keep=keep, multiplier=multiplier, **SMALL)
    assert table[["test", "strength"]].values.tolist() == [["missing", expected[0]], ["extra", expected[1]]]
    swapped = theoretical_test(["recall"], keep=keep, multiplier=multiplier, tests=("extra", "missing"), **SMALL)
    assert swapped[["test", "strength"]].values.tolist() == [["extra", expected[1]], ["missing", expected[0]]]


# --- observed spans of the unbounded metrics ------------------------------------------------------------------


def _brute_span(metric: str, n: int, seed: int, keep: float, multiplier: float) -> float:
    """``max − min`` over every ideal unit against the originals and the first draw of c⁻ and c⁺, unit by unit."""
    counts = [round(gamma * n) for gamma in GAMMAS]
    concepts = np.column_stack([_ideal(s, n) for s in counts])
    matrices = [concepts]
    for test, strength in (("missing", keep), ("extra", multiplier)):
        matrices.append(np.column_stack([_perturbed(test, s, n, seed=seed, column=column, draw=0, strength=strength)
                                         for column, s in enumerate(counts)]))
    values = []
    for unit, s in enumerate(counts):
        params = {"alpha": s / n, "lam": 1.0} if metric == "wpmi" else {}
        for matrix in matrices:
            values.append(np.asarray(score(metric, concepts[:, [unit]], matrix, ties="average", **params)).ravel())
    values = np.concatenate(values)
    values = values[np.isfinite(values)]
    return float(values.max() - values.min())


@pytest.mark.filterwarnings("ignore::neuroneval.metrics.NeuronEvalWarning")
@pytest.mark.parametrize(("keep", "multiplier"), [(None, None), (0.3, 3.0)])
@pytest.mark.parametrize("ties", ["reference", "average"])
def test_observed_spans_of_mad_and_wpmi(keep: float | None, multiplier: float | None, ties: str) -> None:
    """MAD's and WPMI's spans come from all γ units (odd and even columns) and the first draw at the run's strengths.

    The ideal units are binary and top-α selects exactly their positives, so neither score uses tie noise.
    """
    n, seed = 400, 2
    _, spans = theoretical_deltas(["mad", "wpmi", "recall"], gammas=GAMMAS, n=n, draws=2, seed=seed, ties=ties,
                                  keep=keep, multiplier=multiplier, progress=False)
    assert spans["recall"] == 1.0
    for metric in ("mad", "wpmi"):
        r_minus, r_plus = 0.5 if keep is None else keep, 2.0 if multiplier is None else multiplier
        expected = _brute_span(metric, n, seed, r_minus, r_plus)
        assert spans[metric] == pytest.approx(expected, rel=1e-9), metric


# --- chunking ---------------------------------------------------------------------------------------------------


def test_average_ties_do_not_depend_on_the_chunk_size() -> None:
    """Without tie noise, chunks of 1, 3 and all 7 draws give the same Δs_d (also with a rank metric)."""
    kwargs = {"gammas": (0.3, 0.05), "n": 300, "draws": 7, "ties": "average", "progress": False}
    metrics = ["recall", "auc", "spearman", "mad"]
    results = [theoretical_deltas(metrics, chunk_draws=chunk, **kwargs)[0] for chunk in (1, 3, 7, None)]
    for other in results[1:]:
        assert other.keys() == results[0].keys()
        for key, values in results[0].items():
            np.testing.assert_array_equal(other[key], values, err_msg=str(key))


def test_default_chunk_is_the_largest_that_fits_32_mib() -> None:
    """By default a chunk holds ``2**23 // n`` draws (≤ 32 MiB of float32); reference-mode noise depends on it.

    At n = 2**23 // 3 + 1 two draws fit: the default must reproduce ``chunk_draws=2`` exactly, while chunks of 1 or
    3 draws (other tie noise in reference mode) give other numbers, so the check can tell them apart.
    """
    n = 2**23 // 3 + 1
    assert 2 * n * 4 <= 32 * 2**20 < 3 * n * 4
    kwargs = {"gammas": (0.01,), "n": n, "draws": 3, "tests": ("missing",), "ties": "reference", "progress": False}

    def run(chunk_draws: int | None) -> np.ndarray:
        return theoretical_deltas(["inverse_auc"], chunk_draws=chunk_draws, **kwargs)[0][("inverse_auc", 0, "missing")]

    default = run(None)
    np.testing.assert_array_equal(default, run(2))
    for chunk_draws in (1, 3):
        assert not np.array_equal(default, run(chunk_draws)), chunk_draws


def test_a_chunk_holds_at_least_one_draw_when_none_fits_32_mib() -> None:
    """Above 2**23 inputs not even one float32 draw fits 32 MiB (``2**23 // n`` is 0): a chunk still holds exactly
    one draw, so the default reproduces ``chunk_draws=1``, not chunks of 2 (other reference-mode tie noise)."""
    n = 2**23 + 1
    kwargs = {"gammas": (0.01,), "n": n, "draws": 2, "tests": ("missing",), "ties": "reference", "progress": False}

    def run(chunk_draws: int | None) -> np.ndarray:
        return theoretical_deltas(["inverse_auc"], chunk_draws=chunk_draws, **kwargs)[0][("inverse_auc", 0, "missing")]

    default = run(None)
    np.testing.assert_array_equal(default, run(1))
    assert not np.array_equal(default, run(2))


def test_the_strength_column_follows_a_test_name_built_at_run_time() -> None:
    """A test name equal to "missing" but built at run time (not the interned literal) still reports ``keep``."""
    name = "".join(["mis", "sing"])
    table = theoretical_test(["recall"], tests=(name,), keep=0.3, multiplier=3.0, **SMALL)
    assert table["strength"].tolist() == [0.3]


# --- timing -----------------------------------------------------------------------------------------------------


def test_seconds_is_the_perf_counter_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a clock reading 10 s at the start and 35 s afterwards, every row reports 25 s."""
    readings = iter([10.0])
    monkeypatch.setattr(time, "perf_counter", lambda: next(readings, 35.0))
    table = theoretical_test(["recall"], gammas=(0.3, 0.05), n=100, draws=2, progress=False)
    assert table["seconds"].tolist() == [25.0] * 4


def test_seconds_is_a_small_non_negative_wall_time() -> None:
    """A tiny run reports the same non-negative time on every row, no more than the call took."""
    started = time.perf_counter()
    table = theoretical_test(["recall"], gammas=(0.3, 0.05), n=100, draws=2, progress=False)
    elapsed = time.perf_counter() - started
    assert table["seconds"].nunique() == 1
    assert 0.0 <= table["seconds"].iloc[0] <= elapsed

"""Meta-evaluation of the measures by measurement theory (paper 004, Sec. 4, Eq. 13–15), with bootstrap CIs.

Scores come as arrays over concepts: ``(C, M)`` for C concepts and M measures (or ``(J, C, M)`` for J data
subsets). Every statistic is computed for all measures at once and bootstrapped by resampling concepts with
replacement (``n_boot`` resamples from ``seed``; percentile interval of level ``confidence``); tables carry
``ci_low, ci_high, n_boot, seed``.

- Test-retest reliability: Pearson r over concepts between two independent runs (different data batches and
  seeds) of the same measure, the estimate of ρ²_{X,T} = σ²_T/σ²_X (Eq. 13); acceptable from 0.9 on. (The
  authors' public code correlates batches of one concept instead of concepts.)
- Subset consistency: Cronbach's α = J/(J − 1) · (σ²_{X_all} − Σ_j σ²_{X_j}) / σ²_{X_all} over J subsets,
  X_all = Σ_j X_j, variances over concepts (Eq. 14).
- Inter-rater reliability: Kendall's τ between two raters' scores of the concepts (Eq. 15). Eq. 15 is τ_a,
  (2/(n(n − 1))) Σ_{i<j} sgn(X_i¹ − X_j¹) sgn(X_i² − X_j²); the paper computes its correlations with scipy
  (App. F), whose default is τ_b = Σ sgn·sgn / √(n₀ − n₁)(n₀ − n₂), corrected for ties. Both agree without
  ties; ratings on a 1–5 scale have many, so ``tau_variant`` chooses (default ``"b"``).
- Simulated raters: a latent z = standardised true score + noise (``gaussian`` or ``laplace``, standard
  deviation ``noise_scale``) cut into ``levels`` ordered ratings at the normal quantiles of z's spread, so
  the levels are equally likely for Gaussian noise.
- Concurrent validity: Kendall τ, Pearson r and Spearman ρ of each measure with a criterion (human ratings,
  or the world's planted truth).
- MTMM table (Campbell and Fiske, 1959; Fig. 3): Kendall τ between every pair of measures off the diagonal,
  subset consistency on it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np
import pandas as pd
from scipy import stats

from neuroneval.concepteval.validation import as_float_array
from neuroneval.options import Options, check_choice, check_range

TauVariant = Literal["a", "b"]
TAU_VARIANTS: tuple[TauVariant, ...] = get_args(TauVariant)
RaterNoise = Literal["gaussian", "laplace"]
RATER_NOISE: tuple[RaterNoise, ...] = get_args(RaterNoise)
_BOOTSTRAP_CELLS = 4_000_000  # resampled sign-matrix entries held at once


@dataclass(frozen=True)
class BootstrapOptions(Options):
    """Bootstrap over concepts: ``n_boot`` resamples (0: no interval), interval level ``confidence``, ``seed``."""

    n_boot: int = 1000
    confidence: float = 0.95
    seed: int = 0

    def validate(self) -> None:
        check_range(self, "n_boot", 0, integer=True)
        check_range(self, "confidence", 0, 1, low_open=True, high_open=True)
        check_range(self, "seed", 0, integer=True)


@dataclass(frozen=True)
class MeasurementOptions(Options):
    """``tau_variant`` of Kendall's τ (``a``: Eq. 15 as printed, ``b``: scipy's tie-corrected default) and the
    ``bootstrap`` options."""

    tau_variant: TauVariant = "b"
    bootstrap: BootstrapOptions = field(default_factory=BootstrapOptions)

    def validate(self) -> None:
        check_choice(self, "tau_variant", TAU_VARIANTS)


@dataclass(frozen=True)
class RaterOptions(Options):
    """Simulated raters: ``n_raters``, ``noise`` model (``gaussian`` | ``laplace``), its standard deviation
    ``noise_scale`` relative to the standardised true score, ``levels`` of the ordered scale (5 in the paper's
    study), ``seed``."""

    n_raters: int = 3
    noise: RaterNoise = "gaussian"
    noise_scale: float = 0.5
    levels: int = 5
    seed: int = 0

    def validate(self) -> None:
        check_range(self, "n_raters", 2, integer=True)
        check_choice(self, "noise", RATER_NOISE)
        check_range(self, "noise_scale", 0)
        check_range(self, "levels", 2, integer=True)
        check_range(self, "seed", 0, integer=True)


# ---------------------------------------------------------------- statistics, vectorised along leading axes

def pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r along the last axis (broadcasting); NaN where either side has zero variance."""
    dx = x - x.mean(axis=-1, keepdims=True)
    dy = y - y.mean(axis=-1, keepdims=True)
    denominator = np.sqrt((dx * dx).sum(axis=-1) * (dy * dy).sum(axis=-1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, (dx * dy).sum(axis=-1) / denominator, np.nan)


def spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman ρ along the last axis: Pearson r of average ranks."""
    return pearson(stats.rankdata(x, axis=-1), stats.rankdata(y, axis=-1))


def _signs(x: np.ndarray) -> np.ndarray:
    """sgn(x_i − x_j) along the last axis: (..., n) → (..., n, n)."""
    return np.sign(x[..., :, None] - x[..., None, :])


def kendall_from_signs(signs_x: np.ndarray, signs_y: np.ndarray, variant: str = "b") -> np.ndarray:
    """Kendall τ from sign matrices (..., n, n): τ_a (Eq. 15) or τ_b (tie-corrected)."""
    concordance = (signs_x * signs_y).sum(axis=(-2, -1))
    n = signs_x.shape[-1]
    if variant == "a":
        return concordance / (n * (n - 1)) if n > 1 else np.full(concordance.shape, np.nan)
    if variant != "b":
        raise ValueError(f"tau variant must be one of {list(TAU_VARIANTS)}, got {variant!r}")
    denominator = np.sqrt(np.abs(signs_x).sum(axis=(-2, -1)) * np.abs(signs_y).sum(axis=(-2, -1)))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, concordance / denominator, np.nan)


def kendall_tau(x: np.ndarray, y: np.ndarray, variant: str = "b") -> float:
    """Kendall τ of two score vectors over the same concepts (Eq. 15; module docstring for the variants)."""
    first = as_float_array("kendall_tau x", x, ndim=1, min_rows=2)
    second = as_float_array("kendall_tau y", y, ndim=1, min_rows=2)
    if first.shape != second.shape:
        raise ValueError(f"kendall_tau: x and y differ in length ({first.size} vs {second.size})")
    return float(kendall_from_signs(_signs(first), _signs(second), variant))


def cronbach_alpha(subset_scores: np.ndarray) -> np.ndarray:
    """Cronbach's α (Eq. 14) of J subset scores: (J, C) → scalar array, (J, C, M) → (M,); variances over C."""
    scores = np.asarray(subset_scores, dtype=np.float64)
    n_subsets = scores.shape[0]
    total = scores.sum(axis=0)
    total_variance = total.var(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total_variance > 0, n_subsets / (n_subsets - 1)
                        * (total_variance - scores.var(axis=1, ddof=1).sum(axis=0)) / total_variance, np.nan)


def _alpha_replicates(scores: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Cronbach's α of subset scores (J, C, M) on resampled concepts ``rows`` (b, n): (b, M), variances over n."""
    resampled = scores[:, rows]  # (J, b, n, M)
    n_subsets = scores.shape[0]
    total_variance = resampled.sum(axis=0).var(axis=1, ddof=1)
    parts = resampled.var(axis=2, ddof=1).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total_variance > 0, n_subsets / (n_subsets - 1) * (total_variance - parts) / total_variance,
                        np.nan)


# ---------------------------------------------------------------- bootstrap

def _resamples(n: int, options: BootstrapOptions) -> np.ndarray:
    return np.random.default_rng(options.seed).integers(0, n, size=(options.n_boot, n))


def _interval(replicates: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval over the first axis, ignoring NaN replicates."""
    if replicates.shape[0] == 0:
        nan = np.full(replicates.shape[1:], np.nan)
        return nan, nan
    tail = 50 * (1 - confidence)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices give NaN bounds
        return np.nanpercentile(replicates, tail, axis=0), np.nanpercentile(replicates, 100 - tail, axis=0)


def _with_interval(point: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray], n: int,
                   options: BootstrapOptions) -> dict[str, np.ndarray | int]:
    """Point value, percentile interval of ``statistic(indices (b, n)) → (b, ...)`` over resamples."""
    replicates = statistic(_resamples(n, options)) if options.n_boot else np.empty((0, *np.shape(point)))
    low, high = _interval(replicates, options.confidence)
    return {"value": point, "ci_low": low, "ci_high": high, "n_boot": options.n_boot, "seed": options.seed}


def _kendall_matrix_replicates(columns: np.ndarray, other: np.ndarray, indices: np.ndarray,
                               variant: str) -> np.ndarray:
    """τ between every column of ``columns`` (n, A) and of ``other`` (n, B) on resampled rows: (b, A, B)."""
    n = columns.shape[0]
    chunk = max(1, _BOOTSTRAP_CELLS // (n * n * (columns.shape[1] + other.shape[1])))
    out = []
    for first in range(0, len(indices), chunk):
        rows = indices[first : first + chunk]  # (b, n)
        signs_a = _signs(np.moveaxis(columns[rows], -1, 1))[:, :, None]  # (b, A, 1, n, n)
        signs_b = _signs(np.moveaxis(other[rows], -1, 1))[:, None]  # (b, 1, B, n, n)
        out.append(kendall_from_signs(signs_a, signs_b, variant))
    return np.concatenate(out) if out else np.empty((0, columns.shape[1], other.shape[1]))


def _kendall_matrix(columns: np.ndarray, other: np.ndarray, variant: str) -> np.ndarray:
    return kendall_from_signs(_signs(columns.T)[:, None], _signs(other.T)[None], variant)


def _names(measures: Sequence[str] | None, count: int, what: str) -> list[str]:
    names = [f"{what}{i}" for i in range(count)] if measures is None else list(measures)
    if len(names) != count:
        raise ValueError(f"{len(names)} names for {count} columns")
    return names


def _score_matrix(name: str, scores: np.ndarray) -> np.ndarray:
    matrix = as_float_array(name, scores, min_rows=3)
    matrix = matrix[:, None] if matrix.ndim == 1 else matrix
    if matrix.ndim != 2:
        raise ValueError(f"{name}: expected (concepts, measures), got shape {matrix.shape}")
    return matrix


# ---------------------------------------------------------------- public tables

def mean_with_interval(values: np.ndarray, options: BootstrapOptions = BootstrapOptions()) -> dict[str, float | int]:
    """Mean of per-concept scores (C,) with its bootstrap interval over concepts (method comparison, Fig. 4)."""
    scores = as_float_array("values", values, ndim=1, min_rows=1)
    result = _with_interval(np.asarray(scores.mean()), lambda rows: scores[rows].mean(axis=1), scores.size, options)
    return {key: float(value) if isinstance(value, np.ndarray) else value for key, value in result.items()}


def retest_reliability(run_a: np.ndarray, run_b: np.ndarray, measures: Sequence[str] | None = None,
                options: BootstrapOptions = BootstrapOptions()) -> pd.DataFrame:
    """Test-retest reliability per measure: Pearson r over concepts between two runs (C, M) (Eq. 13)."""
    first, second = _score_matrix("run_a", run_a), _score_matrix("run_b", run_b)
    if first.shape != second.shape:
        raise ValueError(f"test_retest: runs differ in shape ({first.shape} vs {second.shape})")
    point = pearson(first.T, second.T)
    result = _with_interval(point, lambda rows: pearson(np.moveaxis(first[rows], 1, 2),
                                                        np.moveaxis(second[rows], 1, 2)), len(first), options)
    return pd.DataFrame({"measure": _names(measures, first.shape[1], "measure"), "statistic": "pearson",
                         **result, "n_concepts": len(first)})


def subset_noise(subset_scores: np.ndarray) -> dict[str, np.ndarray]:
    """Why a measure's α is what it is: its concepts' effects against the noise of a data subset, (J, C, M) → (M,).

    With s_jc the score of concept c on subset j and e_c = (1/J) Σ_j s_jc its effect: ``median_effect`` =
    median_c |e_c|; ``subset_sd`` = √(mean_c var_j s_jc) (ddof 1), the typical spread of one concept's score
    between subsets; ``sign_agreement`` = the share of concepts whose every subset score has the (non-zero) sign
    of e_c. A measure whose effects are small against ``subset_sd`` flips sign between subsets and has a low α.
    """
    scores = np.asarray(subset_scores, dtype=np.float64)
    effect = scores.mean(axis=0)
    agree = np.all(np.sign(scores) == np.sign(effect)[None], axis=0) & (effect != 0)
    return {"median_effect": np.median(np.abs(effect), axis=0),
            "subset_sd": np.sqrt(scores.var(axis=0, ddof=1).mean(axis=0)),
            "sign_agreement": agree.mean(axis=0)}


def subset_consistency(subset_scores: np.ndarray, measures: Sequence[str] | None = None,
                       options: BootstrapOptions = BootstrapOptions()) -> pd.DataFrame:
    """Cronbach's α per measure from scores on J data subsets (J, C, M) (Eq. 14), with :func:`subset_noise`."""
    scores = as_float_array("subset_scores", subset_scores, min_rows=2)
    scores = scores[:, :, None] if scores.ndim == 2 else scores
    if scores.ndim != 3 or scores.shape[1] < 3:
        raise ValueError(f"subset_scores: expected (J >= 2, C >= 3, M), got shape {scores.shape}")
    result = _with_interval(cronbach_alpha(scores), lambda rows: _alpha_replicates(scores, rows), scores.shape[1],
                            options)
    return pd.DataFrame({"measure": _names(measures, scores.shape[2], "measure"), "statistic": "cronbach_alpha",
                         **result, "n_subsets": scores.shape[0], "n_concepts": scores.shape[1],
                         **subset_noise(scores)})


def simulate_raters(true_scores: np.ndarray, options: RaterOptions = RaterOptions()) -> np.ndarray:
    """Ratings (R, C) on 1 … ``levels`` of simulated raters (module docstring for the noise model)."""
    truth = as_float_array("true_scores", true_scores, ndim=1, min_rows=2)
    spread = truth.std()
    standard = (truth - truth.mean()) / spread if spread > 0 else np.zeros_like(truth)
    rng = np.random.default_rng(options.seed)
    shape = (options.n_raters, truth.size)
    noise = rng.standard_normal(shape) if options.noise == "gaussian" else rng.laplace(0, 1 / np.sqrt(2), shape)
    latent = standard + options.noise_scale * noise
    cuts = stats.norm.ppf(np.arange(1, options.levels) / options.levels) * np.sqrt(1 + options.noise_scale ** 2)
    return np.searchsorted(cuts, latent) + 1


def inter_rater(ratings: np.ndarray, raters: Sequence[str] | None = None,
                options: MeasurementOptions = MeasurementOptions()) -> pd.DataFrame:
    """Kendall τ between every pair of raters (R, C) (Eq. 15; Table 3): ``rater_a, rater_b, value, ci…``."""
    scores = as_float_array("ratings", ratings, ndim=2, min_rows=2).T  # (C, R)
    if scores.shape[0] < 3:
        raise ValueError(f"inter_rater: need at least 3 concepts, got {scores.shape[0]}")
    names = _names(raters, scores.shape[1], "rater")
    first, second = np.triu_indices(scores.shape[1], 1)
    point = _kendall_matrix(scores, scores, options.tau_variant)[first, second]
    result = _with_interval(point, lambda rows: _kendall_matrix_replicates(scores, scores, rows,
                                                                            options.tau_variant)[:, first, second],
                            scores.shape[0], options.bootstrap)
    return pd.DataFrame({"rater_a": np.asarray(names)[first], "rater_b": np.asarray(names)[second],
                         "statistic": f"kendall_tau_{options.tau_variant}", **result, "n_concepts": scores.shape[0]})


def concurrent_validity(scores: np.ndarray, criterion: np.ndarray, measures: Sequence[str] | None = None,
                        options: MeasurementOptions = MeasurementOptions()) -> pd.DataFrame:
    """Kendall τ, Pearson r and Spearman ρ of each measure (C, M) with a criterion (C,) (Table 4)."""
    matrix = _score_matrix("scores", scores)
    target = as_float_array("criterion", criterion, ndim=1, min_rows=3)
    if target.size != matrix.shape[0]:
        raise ValueError(f"concurrent_validity: criterion has {target.size} concepts, scores {matrix.shape[0]}")
    names = _names(measures, matrix.shape[1], "measure")
    statistics: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {"pearson": pearson, "spearman": spearman}
    frames = []
    for statistic, function in statistics.items():
        result = _with_interval(function(matrix.T, target), lambda rows, f=function: f(np.moveaxis(matrix[rows], 1, 2),
                                                                                       target[rows][:, None, :]),
                                len(target), options.bootstrap)
        frames.append(pd.DataFrame({"measure": names, "statistic": statistic, **result}))
    column = target[:, None]
    result = _with_interval(_kendall_matrix(matrix, column, options.tau_variant)[:, 0],
                            lambda rows: _kendall_matrix_replicates(matrix, column, rows, options.tau_variant)[..., 0],
                            len(target), options.bootstrap)
    frames.insert(0, pd.DataFrame({"measure": names, "statistic": f"kendall_tau_{options.tau_variant}", **result}))
    return pd.concat(frames, ignore_index=True).assign(n_concepts=len(target))


def mtmm(scores: np.ndarray, measures: Sequence[str] | None = None, *, consistency: np.ndarray | None = None,
         options: MeasurementOptions = MeasurementOptions()) -> pd.DataFrame:
    """The MTMM table (Fig. 3) in tidy form: ``measure_a, measure_b, statistic, value, ci…`` with Kendall τ between
    measures off the diagonal and ``consistency`` (α per measure, e.g. from :func:`subset_consistency`) on it."""
    matrix = _score_matrix("scores", scores)
    names = _names(measures, matrix.shape[1], "measure")
    result = _with_interval(_kendall_matrix(matrix, matrix, options.tau_variant),
                            lambda rows: _kendall_matrix_replicates(matrix, matrix, rows, options.tau_variant),
                            len(matrix), options.bootstrap)
    size = len(names)
    frame = pd.DataFrame({"measure_a": np.repeat(names, size), "measure_b": np.tile(names, size),
                          "statistic": f"kendall_tau_{options.tau_variant}",
                          "value": np.ravel(result["value"]), "ci_low": np.ravel(result["ci_low"]),
                          "ci_high": np.ravel(result["ci_high"]), "n_boot": options.bootstrap.n_boot,
                          "seed": options.bootstrap.seed, "n_concepts": len(matrix)})
    diagonal = frame["measure_a"] == frame["measure_b"]
    if consistency is not None:
        alpha = np.asarray(consistency, dtype=np.float64)
        if alpha.shape != (size,):
            raise ValueError(f"mtmm: consistency must have shape ({size},), got {alpha.shape}")
        frame.loc[diagonal, ["value", "ci_low", "ci_high"]] = np.c_[alpha, np.full((size, 2), np.nan)]
        frame.loc[diagonal, "statistic"] = "cronbach_alpha"
    return frame


def mtmm_matrix(table: pd.DataFrame) -> pd.DataFrame:
    """The square measure × measure matrix of an :func:`mtmm` table (rows and columns in first-seen order)."""
    order = list(dict.fromkeys(table["measure_a"]))
    return table.pivot(index="measure_a", columns="measure_b", values="value").loc[order, order]



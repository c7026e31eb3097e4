"""Your own metric (issue 32): user metrics through the engine, the sanity card through the CLI, and
docs/your_metric.md run as written.

The oracle of the card is the workflow itself: two user metrics written here as plain per-pair functions, one
equal to recall and one to Pearson correlation, must get exactly the built-in metrics' verdicts and meta-AUPRC
that the workflow's own rules wrote (same seeds, units and inputs), on the digits setting of a small build.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from neuroneval.metrics import get_spec, score, score_pairs
from neuroneval.metrics.user import facts_of, user_metric
from tests.workflow.conftest import make_workspace, run_tool, tiny_params

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "your_metric.md"
BLOCK = re.compile(r"^```(python|bash)\n(.*?)^```", re.MULTILINE | re.DOTALL)
SETTING = "digits_cnn_final_super_gt"
#: The built-in tables the card reads, built by the workflow's own rules.
TARGETS = [f"results/meta/{SETTING}.csv", f"results/sanity/experimental/{SETTING}.csv",
           "results/sanity/theoretical/average.csv"]
#: A short theoretical test (γ = 1e-4 needs n ≥ 5,000 for one positive; the page's commands read these params).
SMALL_SANITY = {"theoretical": {"n": 20000, "draws": 5}}


@user_metric(value_range=(0.0, 1.0), params=("alpha",))
def recall_per_pair(a: np.ndarray, c: np.ndarray, alpha: float) -> float:
    """|B(a) ∧ B(c)| / |B(a)|, B(a) the inputs at or above the k-th largest activation, k = ⌈α·n⌉ (000 Eq. 4)."""
    k = min(a.size, max(1, math.ceil(round(alpha * a.size, 9))))
    active = a >= np.sort(a)[::-1][k - 1]
    return float(np.sum(active & (c >= 0.5)) / np.sum(active))


def correlation_per_pair(a: np.ndarray, c: np.ndarray) -> float:
    """Pearson's r, 0 where either vector is constant (the engine's documented convention)."""
    da, dc = a - a.mean(), c - c.mean()
    denominator = math.sqrt(float(np.sum(da * da)) * float(np.sum(dc * dc)))
    return 0.0 if denominator == 0 else float(np.sum(da * dc) / denominator)


correlation_per_pair.value_range = (-1.0, 1.0)  # type: ignore[attr-defined]  # facts as plain attributes


@user_metric(value_range=(-1.0, 1.0), form="matrix")
def correlation_matrix(units: np.ndarray, concepts: np.ndarray) -> np.ndarray:
    """Pearson's r of every unit row with every concept row at once."""
    return np.array([[correlation_per_pair(a, c) for c in concepts] for a in units])


def not_finite(a: np.ndarray, c: np.ndarray) -> float:
    return math.nan


USER = {"recall": f"{__name__}:recall_per_pair", "correlation": f"{__name__}:correlation_per_pair"}


def _environment() -> dict[str, str]:
    bin_dir = Path(sys.executable).parent
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "MPLBACKEND": "Agg",
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")])}


# -- the engine ---------------------------------------------------------------------------------------------------


def test_user_metrics_score_like_the_builtins() -> None:
    rng = np.random.default_rng(0)
    activations = rng.normal(size=(400, 5))
    activations[:, 4] = np.round(activations[:, 4])  # ties at the top-α threshold
    concepts = (rng.random((400, 7)) < [0.02, 0.1, 0.3, 0.5, 0.05, 0.2, 0.0]).astype(float)
    pairs = np.array([[0, 1], [4, 3], [2, 6], [4, 0]])
    for alpha in (0.01, 0.05, 0.2):
        np.testing.assert_array_equal(score(USER["recall"], activations, concepts, alpha=alpha),
                                      score("recall", activations, concepts, alpha=alpha))
        np.testing.assert_array_equal(score_pairs(USER["recall"], activations, concepts, pairs, alpha=alpha),
                                      score_pairs("recall", activations, concepts, pairs, alpha=alpha))
    for user in (USER["correlation"], f"{__name__}:correlation_matrix"):
        np.testing.assert_allclose(score(user, activations, concepts), score("correlation", activations, concepts),
                                   atol=1e-12)
        np.testing.assert_allclose(score_pairs(user, activations, concepts, pairs),
                                   score_pairs("correlation", activations, concepts, pairs), atol=1e-12)


def test_user_metric_facts_reach_the_spec() -> None:
    spec = get_spec(USER["recall"])
    assert (spec.kind, spec.value_range, spec.params, spec.higher_is_better) == ("user", (0.0, 1.0),
                                                                                ("alpha", "top_alpha"), True)
    assert get_spec(USER["correlation"]).value_range == (-1.0, 1.0) and not get_spec(USER["correlation"]).params
    assert facts_of(correlation_matrix).form == "matrix"


def test_an_entry_point_names_a_user_metric(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.metadata import EntryPoint

    from neuroneval.metrics import user

    entry = EntryPoint(name="entry_point_recall", value=USER["recall"], group=user.ENTRY_POINT_GROUP)
    monkeypatch.setattr(user, "entry_points", lambda group: [entry] if group == user.ENTRY_POINT_GROUP else [])
    rng = np.random.default_rng(1)
    activations, concepts = rng.normal(size=(300, 3)), (rng.random((300, 4)) < 0.2).astype(float)
    np.testing.assert_array_equal(score("entry_point_recall", activations, concepts, alpha=0.05),
                                  score("recall", activations, concepts, alpha=0.05))
    with pytest.raises(ValueError, match="unknown metric 'entry_point_other'"):
        get_spec("entry_point_other")


def test_bad_user_metrics_are_named() -> None:
    activations, concepts = np.ones((20, 2)), np.zeros((20, 2))
    with pytest.raises(ValueError, match="cannot import module 'no_such_module_xyz'"):
        get_spec("no_such_module_xyz:f")
    with pytest.raises(ValueError, match="has no attribute 'missing'"):
        get_spec(f"{__name__}:missing")
    with pytest.raises(ValueError, match=r"non-finite score nan at \(\)"):
        score(f"{__name__}:not_finite", activations, concepts)
    with pytest.raises(ValueError, match=r"package\.module:function"):
        get_spec("not_a_metric")
    with pytest.raises(ValueError, match="'lam' comes with 'alpha'"):
        user_metric(params=("lam",))
    with pytest.raises(ValueError, match="low < high"):
        user_metric(value_range=(1.0, 0.0))


# -- the card, through the CLI, against the workflow's own tables ------------------------------------------------


@pytest.fixture(scope="module")
def digits_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workflow copy with the digits setting's built-in tables built by its rules (≈ 2 minutes on 2 cores)."""
    workspace = make_workspace(tmp_path_factory.mktemp("your_metric"), tiny_params(sanity=SMALL_SANITY))
    run_tool(["snakemake", "--cores", "2", *TARGETS], workspace)
    return workspace


@pytest.mark.slow
def test_user_recall_and_correlation_get_the_builtin_verdicts_and_meta_auprc(digits_workspace: Path,
                                                                             tmp_path: Path) -> None:
    """Slow (marker ``slow``): reads ``digits_workspace``, whose rules build the digits tables (≈ 2 min on 2 cores)."""
    out = tmp_path / "cards"
    result = subprocess.run([sys.executable, "-m", "neuroneval.cli", "sanity", "--metric", USER["recall"],
                             "--metric", USER["correlation"], "--settings", SETTING, "--root",
                             str(digits_workspace), "--out", str(out)],
                            env=_environment(), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    results = digits_workspace / "results"
    builtin_meta = pd.read_csv(results / "meta" / f"{SETTING}.csv").set_index("metric")
    builtin_theoretical = pd.read_csv(results / "sanity" / "theoretical" / "average.csv")
    builtin_experimental = pd.read_csv(results / "sanity" / "experimental" / f"{SETTING}.csv")
    for builtin, user in USER.items():
        folder = out / user.replace(":", "-")
        assert f"# Sanity card: {user}" in result.stdout
        verdicts = pd.read_csv(folder / "verdicts.csv").set_index("metric")
        # the card's own row and the built-in's row (read from the built tables) agree column by column
        for column in ("experimental_missing", "experimental_extra", "theoretical_missing", "theoretical_extra"):
            assert verdicts.loc[user, column] == pytest.approx(verdicts.loc[builtin, column], abs=1e-12), column
        for column in ("pass_missing", "pass_extra", "pass"):
            assert verdicts.loc[user, column] == verdicts.loc[builtin, column], column
        # and the card's built-in row is the workflow's: Decrease Acc recomputed from the tidy files
        experimental = pd.read_csv(folder / "experimental.csv")
        mine = experimental.set_index("test")["decrease_acc"]
        theirs = builtin_experimental[builtin_experimental["metric"] == builtin].set_index("test")["decrease_acc"]
        assert mine.index.tolist() == theirs.index.tolist() == ["missing", "extra"]
        np.testing.assert_allclose(mine.to_numpy(dtype=float), theirs.to_numpy(dtype=float), atol=1e-12)
        theoretical = pd.read_csv(folder / "theoretical.csv").set_index(["test", "gamma"])
        reference = builtin_theoretical[builtin_theoretical["metric"] == builtin].set_index(["test", "gamma"])
        np.testing.assert_allclose(theoretical["decrease_acc"], reference.loc[theoretical.index, "decrease_acc"],
                                   atol=1e-12)
        assert verdicts.loc[builtin, "theoretical_missing"] == pytest.approx(
            reference.xs("missing")["decrease_acc"].mean(), abs=1e-4)
        # meta-AUPRC, its interval and α: the rows the card wrote in results/meta's shape, both files at %.6g
        mine = pd.read_csv(folder / "meta_rows.csv").set_index("metric").loc[user]
        row = builtin_meta.loc[builtin]
        for column in ("val_auprc", "test_auprc", "ci_low", "ci_high", "test_top1", "chance_auprc"):
            assert mine[column] == pytest.approx(row[column], abs=1e-6), column
        assert mine[["alpha", "lam"]].equals(row[["alpha", "lam"]])
        # rank among the built-ins: one plus those scoring higher to 6 decimals (competition ranks)
        meta = pd.read_csv(folder / "meta.csv").set_index("setting").loc[SETTING]
        assert meta["test_auprc"] == pytest.approx(row["test_auprc"], abs=1e-6)
        higher = builtin_meta["test_auprc"].round(6) > round(meta["test_auprc"], 6)
        assert (meta["rank"], meta["of"]) == (1 + int(higher.sum()), len(builtin_meta) + 1)
        assert (folder / "card.png").stat().st_size > 0
        assert "Time for" in (folder / "card.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_cli_names_a_metric_it_cannot_import(digits_workspace: Path) -> None:
    """Slow (marker ``slow``): reads ``digits_workspace``, whose rules build the digits tables (≈ 2 min on 2 cores)."""
    result = subprocess.run([sys.executable, "-m", "neuroneval.cli", "sanity", "--metric", "no_such_module_xyz:f",
                             "--root", str(digits_workspace)], env=_environment(), capture_output=True, text=True)
    assert result.returncode == 2 and "no_such_module_xyz" in result.stderr


# -- docs/your_metric.md, run as written -------------------------------------------------------------------------


def page_blocks() -> list[tuple[str, str]]:
    """(language, code) of every fenced python and bash block of the page, in order."""
    return [(match.group(1), match.group(2)) for match in BLOCK.finditer(PAGE.read_text(encoding="utf-8"))]


@pytest.mark.slow
def test_the_page_runs_as_written(digits_workspace: Path) -> None:
    """Slow (marker ``slow``): reads ``digits_workspace``, whose rules build the digits tables (≈ 2 min on 2 cores)."""
    environment = _environment()
    outputs = []
    for language, code in page_blocks():
        first_line = code.splitlines()[0]
        if language == "python" and re.fullmatch(r"# [\w.]+\.py", first_line):
            (digits_workspace / first_line[2:]).write_text(code, encoding="utf-8")  # a file the page shows
            continue
        command = [sys.executable, "-c", code] if language == "python" else ["bash", "-euo", "pipefail", "-c", code]
        result = subprocess.run(command, cwd=digits_workspace, env={**environment, "PYTHONPATH": os.pathsep.join(
            [str(digits_workspace), environment["PYTHONPATH"]])}, capture_output=True, text=True)
        assert result.returncode == 0, f"{language} block failed:\n{code}\n{result.stdout}\n{result.stderr}"
        outputs.append(result.stdout)
    printed = "".join(outputs)
    assert "# Sanity card: mymetric:cohen_d" in printed and "# Sanity card: mymetric:top_recall" in printed
    cards = digits_workspace / "results" / "your_metric"
    recall = pd.read_csv(cards / "mymetric-top_recall" / "verdicts.csv").set_index("metric")
    assert recall.loc["mymetric:top_recall", "pass"] == recall.loc["recall", "pass"]
    # the page's reading of Cohen's d: no decrease on the ideal units, its score rises under every perturbation
    theoretical = pd.read_csv(cards / "mymetric-cohen_d" / "theoretical.csv")
    assert (theoretical["decrease_acc"] == 0).all() and (theoretical["mean_delta"] >= 0).all()
    assert not pd.read_csv(cards / "mymetric-cohen_d" / "verdicts.csv").set_index("metric").loc[
        "mymetric:cohen_d", "pass"]
    meta = pd.read_csv(cards / "mymetric-cohen_d" / "meta.csv")
    assert meta["setting"].tolist() == [SETTING] and 0 < meta["test_auprc"].iloc[0] <= 1

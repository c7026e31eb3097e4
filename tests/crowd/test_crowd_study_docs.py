"""docs/crowd_study.md runs as written: its fenced python and bash blocks, in page order, in a fresh folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "crowd_study.md"
BLOCK = re.compile(r"^```(python|bash)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def page_blocks() -> list[tuple[str, str]]:
    return [(match.group(1), match.group(2)) for match in BLOCK.finditer(PAGE.read_text(encoding="utf-8"))]


def test_the_page_walks_through_every_step() -> None:
    commands = "\n".join(code for language, code in page_blocks() if language == "bash")
    for step in ("crowd design", "--gold", "crowd simulate-ratings", "crowd ingest", "crowd analyze", "crowd cost",
                 "concepteval ratings"):
        assert step in commands, step
    assert "docs/crowd_study.md" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_block_of_the_page_runs_as_written(tmp_path: Path) -> None:
    bin_dir = Path(sys.executable).parent
    environment = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
                   "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
                   "MPLBACKEND": "Agg"}
    for language, code in page_blocks():
        command = [sys.executable, "-c", code] if language == "python" else ["bash", "-euo", "pipefail", "-c", code]
        result = subprocess.run(command, cwd=tmp_path, env=environment, capture_output=True, text=True)
        assert result.returncode == 0, f"{language} block failed:\n{code}\n{result.stdout}\n{result.stderr}"
    # η = 0.13 was simulated: every estimate's interval covers it
    eta = pd.read_csv(tmp_path / "analysis" / "rater_error.csv")
    overall = eta[eta["rater"] == "all"]
    assert set(overall["items"]) == {"gold", "all (truth table)"} and len(overall) == 4
    assert ((overall["ci_low"] <= 0.13) & (0.13 <= overall["ci_high"])).all(), overall
    curve = pd.read_csv(tmp_path / "analysis" / "curve.csv")
    assert set(curve["sampling"]) == {"pseudo", "uniform"}
    assert (tmp_path / "analysis" / "setting2.png").stat().st_size > 10_000
    # with η = 0.13, Bayes with the pseudo-label prior beats the plain average at every cost (Fig. 3b)
    pseudo = curve[(curve["sampling"] == "pseudo")].pivot_table(index=["n_raters", "n_inputs"], columns="method",
                                                                values="rce")
    assert (pseudo["bayes_pseudo"] < pseudo["average"]).all()
    cost = pd.read_csv(tmp_path / "cost.csv")
    design = cost[cost["question"] == "design"].iloc[0]
    assert design["dollars"] == 0.72 and np.isfinite(design["rce"])
    # Table 3 is scipy's Kendall τ of the page's ratings
    human = pd.read_csv(tmp_path / "human.csv")
    table3 = pd.read_csv(tmp_path / "tables" / "table3_inter_rater.csv").set_index(["aspect", "rater_a", "rater_b"])
    wide = human[human["aspect"] == "input"].pivot(index="concept", columns="rater", values="rating")
    expected = stats.kendalltau(wide["expert1"], wide["expert2"]).statistic
    assert np.isclose(table3.loc[("input", "expert1", "expert2"), "value"], expected, atol=1e-6)  # CSV: 6 digits
    table4 = pd.read_csv(tmp_path / "tables" / "table4_validity.csv")
    assert set(table4["measure"]) == {"IN-EmbCos", "OUT-EmbCos", "random"}

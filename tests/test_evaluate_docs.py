"""docs/evaluate.md runs as written: its fenced python and bash blocks, in page order, in a fresh directory."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "evaluate.md"
BLOCK = re.compile(r"^```(python|bash)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def page_blocks() -> list[tuple[str, str]]:
    """(language, code) of every fenced python and bash block of the page, in order."""
    return [(match.group(1), match.group(2)) for match in BLOCK.finditer(PAGE.read_text(encoding="utf-8"))]


def test_the_page_has_the_evaluate_command() -> None:
    commands = [code for language, code in page_blocks() if language == "bash"]
    assert any(code.startswith("neuroneval evaluate ") for code in commands)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "## Evaluate your explanations" in readme and "docs/evaluate.md" in readme


def test_every_block_of_the_page_runs_as_written(tmp_path: Path) -> None:
    bin_dir = Path(sys.executable).parent
    environment = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
                   "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
                   "MPLBACKEND": "Agg"}
    outputs = []
    for language, code in page_blocks():
        command = [sys.executable, "-c", code] if language == "python" else ["bash", "-euo", "pipefail", "-c", code]
        result = subprocess.run(command, cwd=tmp_path, env=environment, capture_output=True, text=True)
        assert result.returncode == 0, f"{language} block failed:\n{code}\n{result.stdout}\n{result.stderr}"
        outputs.append(result.stdout)
    summary = pd.read_csv(tmp_path / "evaluation" / "summary.csv").set_index(["source", "metric"])["mean"]
    for metric in {name for _, name in summary.index}:
        # the page's promise: careful above sloppy above the random floor, in every score
        assert summary[("careful", metric)] > summary[("sloppy", metric)] > summary[("random", metric)], metric
        assert summary[("careful", metric)] <= summary[("optimum", metric)] + 1e-9, metric
    assert any(text.startswith("# Evaluation of explanations") for text in outputs)
    # the section on other tools' files: each format read, its texts mapped, the unmappable one listed
    expected = {"eval_clip": ("clip", {"class0": "digit:0", "class1": "digit:1"}),
                "eval_delphi": ("delphi", {"class3": "digit:3", "class7": "digit:7"}),
                "eval_neuronpedia": ("neuronpedia", {"class4": "digit:4", "class5": "digit:5"}),
                "eval_openai": ("openai", {"class6": "digit:6 OR digit:0"})}
    for folder, (source, mapped) in expected.items():
        units = pd.read_csv(tmp_path / folder / "units.csv")
        mine = units[units["source"] == source].drop_duplicates("unit").set_index("unit")["explanation"]
        assert mine.to_dict() == mapped, folder
    unscorable = pd.read_csv(tmp_path / "eval_clip" / "unscorable.csv")
    assert unscorable.loc[unscorable["text"] == "curly loops", "reason"].str.contains("no concept matches").all()
    assert "curly loops" in "".join(outputs)

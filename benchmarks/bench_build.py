"""Time a from-scratch build of the embedded default, then a no-op rebuild (issue 4's ≤ 10 minute budget).

Usage: ``python benchmarks/bench_build.py [--cores 2] [--target results/table4.csv] [--keep DIR]``.
Copies the workflow into a scratch directory, runs Snakemake there, prints the wall time, the per-rule time
from Snakemake's ``benchmark:`` files, and the time and job count of a second run that should do nothing.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
COPIED = ["Snakefile", "workflow", "profiles", "environment.yml", "params.yaml"]


def run_snakemake(workspace: Path, cores: int, target: str) -> tuple[float, str]:
    started = time.perf_counter()
    result = subprocess.run([str(Path(sys.executable).parent / "snakemake"), "--cores", str(cores), target],
                            cwd=workspace, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"snakemake failed:\n{result.stderr[-4000:]}")
    return elapsed, result.stdout + result.stderr


def rule_times(workspace: Path) -> pd.DataFrame:
    rows = []
    for path in sorted((workspace / "logs" / "benchmarks").rglob("*.tsv")):
        seconds = pd.read_csv(path, sep="\t")["s"].iloc[0]
        rows.append({"job": str(path.relative_to(workspace / "logs" / "benchmarks")), "seconds": seconds})
    return pd.DataFrame(rows).sort_values("seconds", ascending=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--target", default="all")
    parser.add_argument("--keep", type=Path, help="build here instead of a temporary directory (kept)")
    arguments = parser.parse_args()
    workspace = arguments.keep or Path(tempfile.mkdtemp(prefix="neuroneval-build-"))
    workspace.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, workspace / name, dirs_exist_ok=True)
        else:
            shutil.copy2(source, workspace / name)
    first, _ = run_snakemake(workspace, arguments.cores, arguments.target)
    second, log = run_snakemake(workspace, arguments.cores, arguments.target)
    print(f"from-scratch build of {arguments.target!r} on {arguments.cores} cores: {first:.1f} s")
    print(rule_times(workspace).to_string(index=False))
    nothing = "Nothing to be done" in log
    print(f"second run: {second:.1f} s, {'nothing to be done' if nothing else 'RAN JOBS'}")
    if not arguments.keep:
        shutil.rmtree(workspace)


if __name__ == "__main__":
    main()

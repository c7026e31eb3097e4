"""DVC spine: `dvc repro` builds, a second repro is a no-op, push → fresh clone → pull round-trips byte for byte
with Snakemake's records, so the clone plans what the building tree plans."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import yaml

from tests.workflow.conftest import ROOT, run_tool

GIT_IDENTITY = {"GIT_AUTHOR_NAME": "test", "GIT_AUTHOR_EMAIL": "test@example.org",
                "GIT_COMMITTER_NAME": "test", "GIT_COMMITTER_EMAIL": "test@example.org"}

TRACKED = ("data", "results", "explanations")



def content_hashes(workspace: Path) -> dict[str, str]:
    hashes = {}
    for top in TRACKED:
        for path in sorted((workspace / top).rglob("*")):
            if path.is_file() and path.name != ".gitignore":
                hashes[str(path.relative_to(workspace))] = hashlib.md5(path.read_bytes()).hexdigest()
    return hashes


def planned_jobs(workspace: Path, target: str = "results/table4.csv") -> dict[str, int]:
    """Jobs per rule that a dry run plans: the "Job stats" table of ``snakemake -n``."""
    result = run_tool(["snakemake", "-n", target], workspace)
    lines = (result.stdout + result.stderr).splitlines()
    counts: dict[str, int] = {}
    for line in lines[lines.index("Job stats:") + 1:] if "Job stats:" in lines else []:
        match = re.fullmatch(r"(\w+)\s+(\d+)", line.strip())
        if match is None and counts:
            break
        if match is not None and match.group(1) != "total":
            counts[match.group(1)] = int(match.group(2))
    return counts


def change_noise(workspace: Path) -> None:
    params = yaml.safe_load((workspace / "params.yaml").read_text())
    params["world"]["vision"]["noise_std"] = float(params["world"]["vision"]["noise_std"]) + 0.01
    (workspace / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))


def test_repro_push_clone_pull_round_trip(built_workspace: Path, tmp_path: Path) -> None:
    """On a copy of the tiny build (timestamps and Snakemake metadata kept), ``dvc repro`` runs every stage's
    Snakemake target — already current and, as outputs persist, left in place, so nothing is rebuilt — and
    records and caches every declared output, Snakemake's records among them; a missing or undeclared output
    fails here (the pull must restore every file). Every stage but ``fidelity`` is pushed; a fresh git clone
    then pulls (``make pull``'s command): it names the stage the remote lacks, restores the others byte for byte
    with Snakemake's records, plans nothing for Table 4, and after a param change plans exactly the jobs the
    building tree plans."""
    workspace = tmp_path / "repo"
    shutil.copytree(built_workspace, workspace, symlinks=True)
    shutil.copy2(ROOT / ".gitignore", workspace / ".gitignore")
    remote = tmp_path / "remote"
    run_tool(["git", "init", "-q"], workspace)
    run_tool(["dvc", "init", "-q"], workspace)
    run_tool(["dvc", "config", "core.analytics", "false"], workspace)
    run_tool(["dvc", "remote", "add", "-d", "test", str(remote)], workspace)

    first = run_tool(["dvc", "repro"], workspace)
    log = first.stdout + first.stderr
    # every stage of dvc.yaml runs once; outputs persist, so each stage's Snakemake finds the copied build current
    # and rebuilds nothing
    stages = list(yaml.safe_load((workspace / "dvc.yaml").read_text())["stages"])
    assert sorted(re.findall(r"Running stage '(\w+)'", log)) == sorted(stages), log
    assert log.count("Nothing to be done") == len(stages), log
    second = run_tool(["dvc", "repro"], workspace)
    assert "Running stage" not in second.stdout, second.stdout
    status = run_tool(["dvc", "status"], workspace)
    assert "up to date" in status.stdout.lower(), status.stdout
    exported = json.loads((workspace / "snakemake-metadata" / "worlds.json").read_text())
    assert exported and all(name.startswith(("ZGF0YS93b3JsZHMv", "@ZGF0YS93b3JsZHMv")) for name in exported)

    pushed = ["worlds", "models", "tables", "results", "crowd", "sanity", "cosy", "explain", "concepteval", "viewer"]
    run_tool(["dvc", "push", *pushed], workspace)
    run_tool(["git", "add", "-A"], workspace)
    run_tool(["git", "commit", "-q", "-m", "tiny build"], workspace, env=GIT_IDENTITY)
    clone = tmp_path / "clone"
    run_tool(["git", "clone", "-q", str(workspace), str(clone)], tmp_path)
    assert not (clone / "data").exists() and not (clone / ".snakemake").exists()

    pulled = run_tool(["python", "-m", "neuroneval.pipeline.share", "pull"], clone)
    report = pulled.stdout
    assert f"pulled stages: {', '.join(pushed)}" in report, report
    assert "not on the remote" in report and "fidelity: all 3 outputs" in report, report
    before = content_hashes(workspace)
    after = content_hashes(clone)
    fidelity_outputs = {name for name in before if name.startswith("results/fidelity")}
    assert after == {name: digest for name, digest in before.items() if name not in fidelity_outputs}

    assert "Nothing to be done" in run_tool(["snakemake", "-n", "results/table4.csv"], clone).stdout
    assert content_hashes(clone) == after  # pulling and touching changed no byte
    change_noise(workspace)
    change_noise(clone)
    expected = planned_jobs(workspace)
    assert "vision_world" in expected and "table4" in expected, expected
    assert planned_jobs(clone) == expected

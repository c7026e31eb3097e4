"""The tiny default built through ``sbatch`` on a real (local, single-node) SLURM cluster with the workflow's SLURM
profile and the official executor plugin: every job Snakemake plans is a SLURM job that completed, in the partition
the profile gives its rule, and the tables are byte-identical to a local build."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.cluster.conftest import TARGET, slurm_env
from tests.workflow.conftest import make_workspace, run_tool, tiny_params
from tests.workflow.test_dvc import planned_jobs

pytestmark = pytest.mark.cluster

SUBMITTED = re.compile(r"has been submitted with SLURM jobid (\d+) \(log: (\S+)\)")
#: Rules the profile (profiles/slurm/config.yaml) sends to the GPU partition.
GPU_RULES = {"train_vision_classifier"}


def result_hashes(workspace: Path) -> dict[str, str]:
    return {str(path.relative_to(workspace)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted((workspace / "results").rglob("*")) if path.is_file()}


def completed_jobs(jobcomp_log: Path) -> dict[int, dict[str, str]]:
    """slurmctld's job completion log (``JobCompType=jobcomp/filetxt``): one ``Key=value …`` line per finished
    job, keyed by job id."""
    jobs = {}
    for line in jobcomp_log.read_text().splitlines():
        fields = dict(re.findall(r"(\w+)=(\S*)", line))
        if "JobId" in fields:
            jobs[int(fields["JobId"])] = fields
    return jobs


def test_tiny_table4_through_slurm(slurm_cluster: Path, local_build: Path, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "slurm_build", tiny_params())
    planned = planned_jobs(workspace, TARGET)
    assert planned.get("table4") == 1 and planned.get("train_vision_classifier"), planned

    started = time.monotonic()
    # no slurmdbd on the local cluster: the plugin polls squeue (MinJobAge keeps finished jobs there for an hour);
    # no account to guess; rules' `threads:` capped at the node's CPUs; job logs kept for the per-rule count below
    cpus = subprocess.run(["sinfo", "-h", "-o", "%c"], env={**os.environ, **slurm_env()}, capture_output=True,
                          text=True, check=True).stdout.split()[0]
    run = run_tool(["snakemake", "--workflow-profile", "profiles/slurm", "--slurm-status-command", "squeue",
                    "--slurm-init-seconds-before-status-checks", "5", "--slurm-no-account",
                    "--slurm-keep-successful-logs", "--max-threads", cpus, TARGET], workspace, env=slurm_env())
    elapsed = time.monotonic() - started
    log = run.stdout + run.stderr

    submitted = {int(jobid): Path(path) for jobid, path in SUBMITTED.findall(log)}
    # each job's log lies under .snakemake/slurm_logs/rule_<rule>/<wildcards>/<jobid>.log
    rules = Counter(next(part for part in path.parts if part.startswith("rule_")).removeprefix("rule_")
                    for path in submitted.values())
    assert rules == planned, (rules, planned)  # every planned job, and nothing else, was submitted with sbatch

    finished = completed_jobs(slurm_cluster / "jobcomp.log")
    ours = {jobid: fields for jobid, fields in finished.items() if fields.get("WorkDir") == str(workspace)}
    assert set(ours) == set(submitted), (sorted(ours), sorted(submitted))
    assert {fields["JobState"] for fields in ours.values()} == {"COMPLETED"}
    assert {fields["ExitCode"] for fields in ours.values()} == {"0:0"}
    assert len({fields["Name"] for fields in ours.values()}) == 1  # one Snakemake run: its run id names every job
    for jobid, path in submitted.items():
        rule = next(part for part in path.parts if part.startswith("rule_")).removeprefix("rule_")
        assert ours[jobid]["Partition"] == ("gpu" if rule in GPU_RULES else "cpu"), (rule, ours[jobid])
        assert path.exists(), path

    expected = result_hashes(local_build)
    assert "results/table4.csv" in expected
    assert result_hashes(workspace) == expected
    print(f"\nSLURM ran {len(ours)} jobs ({sum(planned.values())} planned by Snakemake; per rule: "
          f"{dict(sorted(rules.items()))}) in {elapsed:.0f} s; results identical to the local build: "
          f"{', '.join(f'{name} sha256 {digest[:12]}' for name, digest in expected.items())}")

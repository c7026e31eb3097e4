"""Fixtures of the cluster tests (marker ``cluster``, run by ``make test-cluster``, left out of ``make test``): the
local SLURM cluster of ``scripts/slurm-local.sh`` and one local build of :data:`TARGET` that both tests compare
with."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.workflow.conftest import make_workspace, run_tool, tiny_params

#: What the cluster tests build: Table 4 of the tiny default (52 jobs: the worlds, every model, the settings and
#: their meta-evaluations), about 5 minutes of work on 2 cores; the full tiny run takes twice that.
TARGET = "results/table4.csv"

#: Where ``scripts/slurm-local.sh`` keeps the cluster (its default; the script reads the same variable).
SLURM_STATE = Path(os.environ.get("NEURONEVAL_SLURM_STATE", "/tmp/neuroneval-slurm"))


def slurm_env() -> dict[str, str]:
    """The environment that points Slurm's clients at the local cluster."""
    return {"SLURM_CONF": str(SLURM_STATE / "slurm.conf")}


@pytest.fixture(scope="session")
def slurm_cluster() -> Path:
    """The local cluster's state directory; skips (naming the command that starts it) when it is not up."""
    conf = SLURM_STATE / "slurm.conf"
    if shutil.which("sinfo") is None or not conf.exists():
        pytest.skip(f"no local SLURM cluster ({conf} missing): run `make test-cluster` or `make slurm-up` first")
    state = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], env={**os.environ, **slurm_env()},
                           capture_output=True, text=True)
    if state.returncode != 0 or state.stdout.split()[:1] not in (["idle"], ["mixed"], ["allocated"]):
        pytest.skip(f"local SLURM cluster not answering or node not usable ({state.stdout.strip()} "
                    f"{state.stderr.strip()}): `make slurm-down && make slurm-up`")
    return SLURM_STATE


@pytest.fixture(scope="session")
def local_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """:data:`TARGET` built by plain local Snakemake (2 cores), the reference for the SLURM build and the
    tree the SSH round trip pushes."""
    workspace = make_workspace(tmp_path_factory.mktemp("local_build"), tiny_params())
    run_tool(["snakemake", "--cores", "2", TARGET], workspace)
    return workspace

"""A job's thread limits (neuroneval.pipeline.runner._limit_threads): BLAS/OpenMP/torch threads at the job's
``threads``, and OpenMP threads that wait sleep instead of spinning unless the user chose otherwise."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROBE = """
import json, os, sys
from neuroneval.pipeline.runner import _limit_threads
_limit_threads(int(sys.argv[1]))
import torch
print(json.dumps({"torch": torch.get_num_threads(), "omp": os.environ["OMP_NUM_THREADS"],
                  "wait": os.environ.get("OMP_WAIT_POLICY")}))
"""


def _probe(threads: int, **env: str) -> dict:
    environment = {key: value for key, value in os.environ.items() if key != "OMP_WAIT_POLICY"}
    result = subprocess.run([sys.executable, "-c", PROBE, str(threads)], env={**environment, **env},
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("threads", [1, 2])
def test_a_job_gets_its_threads_and_sleeping_waits(threads: int) -> None:
    assert _probe(threads) == {"torch": threads, "omp": str(threads), "wait": "PASSIVE"}


def test_a_users_wait_policy_is_kept() -> None:
    assert _probe(1, OMP_WAIT_POLICY="ACTIVE")["wait"] == "ACTIVE"

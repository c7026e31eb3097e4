"""The resource line every job writes last into its log (neuroneval.pipeline.runner.job_resources): the job's CPU
seconds, imports and waited children included, checked against ``os.times`` (times(2), not getrusage) in a fresh
process, and written when the step fails too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from neuroneval.pipeline.runner import RESOURCE_LINE

PROBE = """
import json, os, subprocess, sys, time
from types import SimpleNamespace
from neuroneval.pipeline.runner import run_step

def step(job):
    end = time.process_time() + 0.3
    while time.process_time() < end:
        pass
    subprocess.run([sys.executable, "-c", "import time\\nend = time.process_time() + 0.3\\n"
                    "while time.process_time() < end: pass"], check=True)
    if job.params.fail:
        raise RuntimeError("step failed on purpose")

job = SimpleNamespace(input=[], output=[], params=SimpleNamespace(fail=sys.argv[2] == "fail"), wildcards=[],
                      threads=1, log=[sys.argv[1]])
try:
    run_step(step, job)
finally:
    t = os.times()
    print(json.dumps({"self": t.user + t.system, "children": t.children_user + t.children_system}))
"""


def _run(tmp_path: Path, outcome: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    log = tmp_path / f"{outcome}.log"
    result = subprocess.run([sys.executable, "-c", PROBE, str(log), outcome], capture_output=True, text=True,
                            timeout=120)
    return result, log.read_text().splitlines()


def test_the_last_log_line_holds_the_jobs_cpu_including_its_children(tmp_path: Path) -> None:
    result, lines = _run(tmp_path, "pass")
    assert result.returncode == 0, result.stderr
    assert lines[-1].startswith(RESOURCE_LINE)
    record = json.loads(lines[-1][len(RESOURCE_LINE):])
    times = json.loads(result.stdout.strip().splitlines()[-1])
    # ≥ 0.3 s in the step, ≥ 0.3 s in its child, the imports before: the same total os.times reads right after
    assert times["children"] >= 0.3 and times["self"] >= 0.3
    assert abs(record["cpu_seconds"] - (times["self"] + times["children"])) <= 0.05
    assert 10 < record["max_rss_mb"] < 4096


def test_a_failing_step_still_writes_its_resources_after_the_traceback(tmp_path: Path) -> None:
    result, lines = _run(tmp_path, "fail")
    assert result.returncode != 0 and "step failed on purpose" in "\n".join(lines)
    assert lines[-1].startswith(RESOURCE_LINE)
    assert json.loads(lines[-1][len(RESOURCE_LINE):])["cpu_seconds"] >= 0.6

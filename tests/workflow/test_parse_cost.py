"""What every Snakemake invocation pays before it plans a job: parsing the Snakefile (issue 36). The params check
names a classifier's layers without building it, and the step versions of an unchanged library are read back from
the cache (neuroneval.code_deps.cache) instead of being computed again."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.workflow.conftest import make_workspace, run_tool, tiny_params

HEAVY_MODULES = {"torch", "timm", "torchvision"}


def test_parsing_the_snakefile_imports_no_torch_and_the_second_parse_reads_the_step_versions(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "repo", tiny_params())
    cache = tmp_path / "cache"
    env = {"PYTHONPATH": str(workspace / "src"), "XDG_CACHE_HOME": str(cache), "PYTHONPROFILEIMPORTTIME": "1"}
    stored = []
    for _ in range(2):
        result = run_tool(["snakemake", "--list-rules"], workspace, env=env)
        assert "meta_setting" in result.stdout
        imported = set(re.findall(r"^import time:.*\|\s*(\S+)\s*$", result.stderr, re.MULTILINE))
        assert "neuroneval.params.check" in imported and not imported & HEAVY_MODULES
        (path,) = (cache / "neuroneval" / "step_versions").glob("*.json")
        stored.append((path, path.stat().st_mtime_ns))
    assert stored[0] == stored[1]  # the second parse computed and stored nothing
    versions = json.loads(stored[0][0].read_text())["versions"]
    rule_files = (workspace / "workflow" / "rules").glob("*.smk")
    named = {step for path in rule_files for step in re.findall(r'step_version\(\s*"(\w+)"\s*\)', path.read_text())}
    assert set(versions) == named

"""Every run profile resumes a killed build by itself (``rerun-incomplete``) and decides reruns by content;
``tests/workflow/test_faults.py`` (``make test-faults``) kills real builds to check the first."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
PROFILES = sorted((ROOT / "profiles").glob("*/config.yaml"))


def test_the_default_profile_is_the_one_snakemake_loads_by_itself() -> None:
    assert ROOT / "profiles/default/config.yaml" in PROFILES and len(PROFILES) >= 3


@pytest.mark.parametrize("profile", PROFILES, ids=lambda path: path.parent.name)
def test_a_killed_runs_jobs_rerun_without_a_flag(profile: Path) -> None:
    settings = yaml.safe_load(profile.read_text())
    assert settings.get("rerun-incomplete") is True, f"{profile}: set `rerun-incomplete: true`"
    assert settings["rerun-triggers"] == ["params", "input", "software-env"]

"""The install story: pins in pyproject, environment.yml and the lock agree; the console script exists."""

import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def pyproject_pins() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project["dependencies"] + project["optional-dependencies"]["dev"]


def test_every_dependency_is_pinned_exactly() -> None:
    assert all("==" in requirement for requirement in pyproject_pins())


def test_environment_yml_has_the_same_pins() -> None:
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(item for item in environment["dependencies"] if isinstance(item, dict))["pip"]
    assert sorted(item for item in pip_section if "==" in item) == sorted(pyproject_pins())
    assert "python=3.11" in environment["dependencies"]


def test_lock_agrees_with_pins() -> None:
    lock = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            lock[name.lower().replace("_", "-")] = version
    for requirement in pyproject_pins():
        name, version = requirement.split("==")
        assert lock[name.lower().replace("_", "-")] == version, requirement


def test_console_script_runs() -> None:
    result = subprocess.run([sys.executable, "-m", "neuroneval.cli", "--version"], capture_output=True, text=True,
                            check=True)
    assert result.stdout.startswith("neuroneval ")


def test_ci_runs_the_linters_and_the_readme_test_command() -> None:
    commands = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    assert "make lint" in commands and "make test" in commands
    assert "make test" in (ROOT / "README.md").read_text()


def test_lint_tools_are_pinned() -> None:
    """`make lint` runs ruff, `snakemake --lint` and snakefmt: each is pinned like every other dependency."""
    pinned = {requirement.split("==")[0].lower() for requirement in pyproject_pins()}
    assert {"ruff", "snakemake", "snakefmt"} <= pinned


def test_extras_are_pinned_and_the_cluster_ones_locked() -> None:
    """The optional extras (slurm, ssh, s3, gs) pin exactly; those `make test-cluster` installs agree with the lock."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {"slurm", "ssh", "s3", "gs"} <= set(extras)
    assert all("==" in requirement for name in ("slurm", "ssh", "s3", "gs") for requirement in extras[name])
    lock = {line.split("==")[0].lower().replace("_", "-"): line.split("==")[1]
            for line in (ROOT / "constraints.txt").read_text().splitlines() if "==" in line and line[0] != "#"}
    for requirement in extras["slurm"] + extras["ssh"]:
        name, version = requirement.split("==")
        assert lock[name.lower()] == version, requirement

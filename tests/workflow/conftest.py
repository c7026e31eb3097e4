"""A throw-away copy of the workflow with a tiny params.yaml, for end-to-end runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

TINY_OVERRIDES = {
    "world": {"vision": {"n_classes": 16, "splits": {"train": 1200, "probe": 600}},
              "text": {"vocab_size": 300, "n_topics": 4, "doc_length": 48.0, "splits": {"train": 300, "probe": 80}}},
    "models": {"vision": {"vision_cnn": {"config": {"width": 8}, "training": {"epochs": 3, "batch_size": 64}},
                          "vision_vit": {"config": {"embed_dim": 16, "depth": 1},
                                         "training": {"epochs": 4, "batch_size": 64}},
                          "vision_cbm": {"config": {"width": 8}, "training": {"epochs": 3, "batch_size": 64}}},
               # the tiny small LM keeps the tied embeddings and peak rate its concepteval margins were set on
               "language": {"lm_small": {"size": "tiny", "context_length": 16, "tie_embeddings": True,
                                         "training": {"epochs": 2, "learning_rate": 0.01}},
                            "lm_large": {"size": "tiny", "context_length": 16, "training": {"epochs": 2}}},
               "contrastive": {"clip": {"config": {"embed_dim": 16,
                                                   "vision": {"layers": [1, 1, 1, 1], "width": 8, "head_width": 16},
                                                   "text": {"context_length": 16, "width": 16, "heads": 2,
                                                            "layers": 1}},
                                        "training": {"epochs": 3, "batch_size": 64}}},
               "probes": {"clip_probe": {"training": {"epochs": 3, "batch_size": 64}}}},
    "activations": {"batch_size": 256, "next_token": {"n_units": 40, "max_positions": 2000}},
    "settings": {"vit_hidden_gt": {"units": [{"model": "vision_vit", "layer": "blocks.0"}]},
                 "vit_hidden_pseudo": {"units": [{"model": "vision_vit", "layer": "blocks.0"}]}},
    # digits (sklearn's 1,797 bundled images) run at full size: ~1 s of training, the two settings in Table 4
    "sanity": {"theoretical": {"n": 50000, "draws": 10},
               "reference_check": {"n": 20000, "draws": 4, "seeds": [0, 1]}},
    # small grids so that the three crowd rules add seconds, not minutes, to the tiny run
    "crowd": {"simulation": {"n_trials": 3}, "sampling": {"sample_sizes": [10, 30, 100, 300]},
              "aggregation": {"costs": [20, 60, 200, 600], "rater_counts": [1, 3]}, "summary": {"n_boot": 50},
              "rarity": {"rarities": [0.1, 0.001], "n_inputs": 4000, "n_units": 6, "n_trials": 3, "n_boot": 50,
                         "sample_sizes": [10, 30, 100, 300, 1000, 3000], "costs": [20, 60, 200, 600],
                         "rater_counts": [1, 3]}},
    # CoSy: few units and images, an embedded diffusion model trained for one epoch (~40 s) and sampled in 8 steps
    "cosy": {"max_units": 8, "n_images": 6, "templates": {"n_concepts": 3, "n_natural": 10},
             "seeds": {"generation_seeds": [0, 1, 2], "n_units": 2}, "distributions": {"n_units": 2, "n_control": 200},
             "embedded": {"training": {"block_out_channels": [16, 32, 32], "norm_num_groups": 4,
                                       "attention_head_dim": 4, "epochs": 1},
                          "sampling": {"steps": 8}}},
    # explanation methods: few maps and masks for the spatial methods, a short bootstrap
    # CoSy and the crowd on the explanations: few units, images and trials
    "explain": {"settings": {"cnn_hidden_gt": {"spatial": {"max_inputs": 100}},
                             "vit_hidden_gt": {"spatial": {"layer": "blocks.0", "max_inputs": 100}}}, "n_boot": 50,
                "cosy": {"max_units": 6, "n_images": 4, "n_control": 200},
                "crowd": {"max_units": 12, "n_trials": 3}},
    # concept evaluation: one LM, short runs, few concepts per unsupervised family, enough random ones for a floor;
    # every family (the planted probes and the random floor are the embedded world's validity criterion)
    "concepteval": {"models": ["lm_small"], "family_set": "all", "windows": {"fit": 96, "run": 48, "subsets": 3},
                    "families": {"neuron": {"count": 8}, "sae": {"count": 8}, "pca": {"count": 4},
                                 "kmeans": {"count": 4}, "random": {"count": 16}},
                    "readability": {"window": 16}, "measurement": {"bootstrap": {"n_boot": 200}}},
}
#: Everything the tiny run builds: Table 4, the worlds report, the crowd study, every sanity and CoSy table, the
#: fidelity report that reads them all, the explanation-methods benchmark, the concept evaluation and the neuron
#: viewer (every DVC stage of dvc.yaml).
TINY_TARGETS = ["results/table4.csv", "results/table4.png", "results/worlds_report.csv", "results/ceiling.csv",
                "results/crowd_summary.csv", "sanity_results", "cosy_results", "fidelity", "explain_results",
                "concepteval_results", "viewer"]

WORKFLOW_FILES = ["Snakefile", "workflow", "profiles", "environment.yml", "dvc.yaml", ".dvcignore", "src"]


def deep_update(base: dict, overrides: Mapping) -> dict:
    """``base`` with ``overrides`` merged in recursively (mappings merge, everything else replaces)."""
    merged = dict(base)
    for key, value in overrides.items():
        merged[key] = deep_update(merged[key], value) if isinstance(value, Mapping) and key in merged else value
    return merged


def tiny_params(**extra: Mapping) -> dict:
    """The repository's params.yaml with the tiny overrides (and ``extra``) applied."""
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params = deep_update(params, TINY_OVERRIDES)
    for key, value in extra.items():
        params = deep_update(params, {key: value})
    return params


def make_workspace(directory: Path, params: Mapping) -> Path:
    """Copy the workflow into ``directory`` with ``params`` as its params.yaml."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in WORKFLOW_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, directory / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif source.exists():
            shutil.copy2(source, directory / name)
    (directory / "params.yaml").write_text(yaml.safe_dump(dict(params), sort_keys=False))
    return directory


def run_tool(args: list[str], cwd: Path, *, check: bool = True,
             env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run a tool of the project's venv (snakemake, dvc, git) in ``cwd`` with the venv first on PATH (and ``env``
    added to the environment)."""
    environment = {**os.environ, **(env or {}), "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    tool = str(BIN / args[0]) if (BIN / args[0]).exists() else args[0]
    result = subprocess.run([tool, *args[1:]], cwd=cwd, env=environment, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed ({result.returncode}):\n{result.stdout[-3000:]}\n"
                             f"{result.stderr[-6000:]}")
    return result


#: What a test may not change in the shared tiny build: its params, what the build made (the folders DVC tracks)
#: and Snakemake's records of it (which decide what a later run or dry run plans).
WATCHED = ("params.yaml", "data/", "results/", "explanations/", ".snakemake/metadata/", ".snakemake/incomplete/")


def build_state(workspace: Path) -> dict[str, tuple[int, int]]:
    """(size, mtime in ns) of every file of ``workspace`` under :data:`WATCHED`, by relative path."""
    state = {}
    for path in sorted(workspace.rglob("*")):
        name = path.relative_to(workspace).as_posix()
        if path.is_file() and not path.is_symlink() and name.startswith(WATCHED):
            stat = path.stat()
            state[name] = (stat.st_size, stat.st_mtime_ns)
    return state


def copy_of_build(built_workspace: Path, directory: Path) -> Path:
    """A copy of the shared tiny build in ``directory`` (made here; timestamps, links and Snakemake's records
    kept), for a test that edits files or reruns jobs: the shared build is read-only to tests."""
    shutil.copytree(built_workspace, directory, symlinks=True)
    return directory


def params_overlay(directory: Path, params: Mapping) -> list[str]:
    """``--configfile`` arguments overlaying ``params`` (written to ``directory``, outside any workspace) on a
    workspace's params.yaml, key by key as the run profiles are: a dry run sees the changed params while nothing
    in the workspace is edited."""
    overlay = directory / "overlay.yaml"
    overlay.write_text(yaml.safe_dump(dict(params), sort_keys=False))
    return ["--configfile", str(overlay)]


@pytest.fixture(scope="session")
def built_workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One complete tiny run of the workflow (:data:`TINY_TARGETS`), shared by the workflow tests.

    ``tests/conftest.py`` keeps every file of this directory on one xdist worker, so it is built once. Tests only
    read it (dry runs included); a test that edits or reruns works on :func:`copy_of_build`, so no result depends
    on the order tests run in. At the end of the session the build must be as it was built: a file of
    :data:`WATCHED` changed, added or removed by a test fails the session, naming the file.
    """
    workspace = make_workspace(tmp_path_factory.mktemp("tiny_run"), tiny_params())
    run_tool(["snakemake", "--cores", "2", *TINY_TARGETS], workspace)
    built = build_state(workspace)
    yield workspace
    now = build_state(workspace)
    changed = sorted(name for name in built.keys() | now.keys() if built.get(name) != now.get(name))
    assert not changed, f"tests changed the shared tiny build (use copy_of_build): {changed[:20]}"

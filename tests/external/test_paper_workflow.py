"""The paper profile through Snakemake: the DAG resolves on a tiny fake tree, runs end to end, and stops early on
a missing checkpoint; the embedded default never touches the external rules; explain_results plans on the paper's
settings and an external spatial explanation runs on user-supplied concept masks."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from neuroneval import io
from neuroneval.explain import read_explanations
from tests.external.conftest import ROOT
from tests.external.fakes import paper_overrides
from tests.workflow.conftest import deep_update, make_workspace, run_tool

PROFILE = ["--configfile", "profiles/paper.yaml", "paths.yaml"]
HIDDEN_TRUTH = ["data/truth/imagenet_resnet50_layer4.csv", "data/truth/places_resnet18_layer4.csv"]
TARGETS = ["results/table4.csv", *HIDDEN_TRUTH]
# The end-to-end run keeps one setting per kind of rule (pseudo-labels + superclasses, CBM, probe, LM) to stay
# near two minutes on two cores; the dry run above plans all ten.
RUN_SETTINGS = ["imagenet_vit_super_siglip", "cub_cbm_gt", "cub_probe_gt", "owt_gpt2_small"]


def paper_workspace(directory: Path, data_root: Path, **changes: dict) -> Path:
    """The workflow with the repository's params.yaml and an overlay ``paths.yaml`` pointing at ``data_root``."""
    workspace = make_workspace(directory, yaml.safe_load((ROOT / "params.yaml").read_text()))
    overlay = paper_overrides(data_root)
    for key, value in changes.items():
        overlay = deep_update(overlay, {key: value})
    (workspace / "paths.yaml").write_text(yaml.safe_dump(overlay, sort_keys=False))
    return workspace


def job_counts(output: str) -> dict[str, int]:
    return {rule: int(count) for rule, count in re.findall(r"^(\w+)\s+(\d+)$", output, flags=re.MULTILINE)}


@dataclass(frozen=True)
class PlannedJob:
    """One job of a dry run's plan: its rule, input and output paths, and Snakemake's reason for it."""

    rule: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    reason: str


def planned_jobs(output: str) -> list[PlannedJob]:
    """The jobs ``snakemake -n`` prints, one block each (``rule``/``localrule`` line, then indented fields)."""
    jobs = []
    for block in re.split(r"\n\s*\n", output):
        rule = re.search(r"^(?:local)?rule (\w+):$", block, flags=re.MULTILINE)
        if rule is None:
            continue
        fields = dict(re.findall(r"^    (\w+): (.*)$", block, flags=re.MULTILINE))
        jobs.append(PlannedJob(rule.group(1), tuple(filter(None, fields.get("input", "").split(", "))),
                               tuple(filter(None, fields.get("output", "").split(", "))), fields.get("reason", "")))
    return jobs


def outputs_of(jobs: list[PlannedJob], rule: str) -> set[str]:
    """Every output path of the planned jobs of ``rule``."""
    return {path for job in jobs if job.rule == rule for path in job.outputs}


def assert_plan_is_needed_and_closed(jobs: list[PlannedJob], targets: list[str], workspace: Path) -> None:
    """A dry run in a fresh workspace plans each job because its outputs are missing (a target rule, which has
    none, because its inputs are planned); every job feeds a target (a target file, or the job of a target rule)
    through the other planned jobs; every input is made by a planned job or is a file the user supplied; no
    embedded world or model is built."""
    assert jobs, "nothing planned"
    made = {path for job in jobs for path in job.outputs}
    for job in jobs:
        expected_reason = "Missing output files" if job.outputs else "Input files updated by another job"
        assert job.reason.startswith(expected_reason), job
        for path in job.inputs:
            assert path in made or (workspace / path).exists(), (job.rule, path)
        assert not any(path.startswith(("data/worlds/", "data/models/")) for path in job.outputs), job
    needed, frontier = set(), [job for job in jobs if job.rule in targets or set(job.outputs) & set(targets)]
    while frontier:
        job = frontier.pop()
        if job in needed:
            continue
        needed.add(job)
        frontier += [other for other in jobs if set(other.outputs) & set(job.inputs)]
    assert [job for job in jobs if job not in needed] == []


def test_dry_run_resolves_the_paper_dag(paper_tree: tuple[Path, dict], params: dict, tmp_path: Path) -> None:
    """Table 4 and the two hidden-layer truths plan, for the profile's settings, each setting's truth, the tables
    of its units and concept source, and Table 4's meta-evaluation, all from the user's files."""
    workspace = paper_workspace(tmp_path, paper_tree[0])
    result = run_tool(["snakemake", "-n", "--cores", "1", *TARGETS, *PROFILE], workspace)
    jobs = planned_jobs(result.stdout)
    assert_plan_is_needed_and_closed(jobs, TARGETS, workspace)
    table4_settings = params["meta"]["settings"]
    settings = [*table4_settings, *(Path(path).stem for path in HIDDEN_TRUTH)]
    assert outputs_of(jobs, "meta_setting") == {f"results/meta/{name}.csv" for name in table4_settings}
    assert {path for path in outputs_of(jobs, "setting_truth") if path.endswith(".csv")} == {
        f"data/truth/{name}.csv" for name in settings}
    activation_rules = {job.rule for job in jobs if job.rule.endswith("_activations")}
    assert set().union(*(outputs_of(jobs, rule) for rule in activation_rules)) == {
        f"data/activations/{params['settings'][name]['dataset']}/{unit['model']}/{unit['layer']}.parquet"
        for name in settings for unit in params["settings"][name]["units"]}
    made = {path for job in jobs for path in job.outputs}
    for name in settings:
        setting = params["settings"][name]
        source = setting["concepts"]["source"].replace(":", "-")
        assert f"data/concepts/{setting['dataset']}/{source}.parquet" in made, name


def test_dry_run_plans_table3_on_the_paper_settings(paper_tree: tuple[Path, dict], tmp_path: Path) -> None:
    """Table 3 and Tables F.1-F.4 on paper 000 App. F.1's eight settings: each setting's truth, α/λ (Table 4's
    choice for the six with known units, the truth α alone for the two IoU-truth hidden layers) and experimental
    test, plus one theoretical run."""
    workspace = paper_workspace(tmp_path, paper_tree[0])
    profile = yaml.safe_load((ROOT / "profiles" / "paper.yaml").read_text())
    sanity_settings = profile["sanity"]["settings"]
    assert len(sanity_settings) == 8 and set(sanity_settings) <= set(profile["settings"])
    known = [name for name in sanity_settings if "truth" not in profile["settings"][name]]
    assert len(known) == 6 and set(known) <= set(profile["meta"]["settings"])
    result = run_tool(["snakemake", "-n", "--cores", "1", "results/table3.csv", *PROFILE], workspace)
    counts = job_counts(result.stdout)
    assert {rule: counts.get(rule) for rule in ("setting_truth", "meta_setting", "sanity_hyperparameters",
                                                "sanity_experimental", "sanity_theoretical", "sanity_table3")} == {
        "setting_truth": 8, "meta_setting": 6, "sanity_hyperparameters": 8, "sanity_experimental": 8,
        "sanity_theoretical": 1, "sanity_table3": 1}
    for name in sanity_settings:
        assert f"results/sanity/experimental/{name}.csv" in result.stdout, name


def test_the_embedded_default_plans_no_external_job(tmp_path: Path) -> None:
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    workspace = make_workspace(tmp_path, params)
    result = run_tool(["snakemake", "-n", "--cores", "1", "results/table4.csv"], workspace)
    assert "external_" not in result.stdout
    assert job_counts(result.stdout)["meta_setting"] == len(params["meta"]["settings"])


def test_a_missing_checkpoint_stops_snakemake_naming_the_key(paper_tree: tuple[Path, dict], tmp_path: Path) -> None:
    workspace = paper_workspace(tmp_path, paper_tree[0],
                                external={"models": {"resnet18_places": {"weights_path": "checkpoints/gone.pth"}}})
    result = run_tool(["snakemake", "-n", "--cores", "1", *TARGETS, *PROFILE], workspace, check=False)
    assert result.returncode != 0
    message = result.stdout + result.stderr
    assert "external.models.resnet18_places.weights_path:" in message
    assert f"{paper_tree[0]}/checkpoints/gone.pth does not exist" in message
    assert not (workspace / "data").exists()


@pytest.fixture(scope="module")
def paper_run(paper_tree: tuple[Path, dict], tmp_path_factory: pytest.TempPathFactory) -> Path:
    workspace = paper_workspace(tmp_path_factory.mktemp("paper_run"), paper_tree[0], meta={"settings": RUN_SETTINGS})
    run_tool(["snakemake", "--cores", "2", "results/table4.csv", *PROFILE], workspace)
    return workspace


@pytest.mark.slow
def test_the_paper_dag_runs_end_to_end_on_the_fakes(paper_run: Path) -> None:
    """Slow (marker ``slow``): reads ``paper_run``, Table 4 built by Snakemake on the fake paper tree."""
    params = deep_update(deep_update(yaml.safe_load((ROOT / "params.yaml").read_text()),
                                     yaml.safe_load((ROOT / "profiles/paper.yaml").read_text())),
                         yaml.safe_load((paper_run / "paths.yaml").read_text()))
    table = pd.read_csv(paper_run / "results/table4.csv")
    settings = params["meta"]["settings"]
    assert settings == RUN_SETTINGS
    assert table.columns.tolist() == ["metric", *settings, "mean_auprc", "mean_rank"]
    values = table[settings].to_numpy()
    assert np.isfinite(values).all() and (values >= 0).all() and (values <= 1).all()
    for name in settings:
        setting = params["settings"][name]
        concepts, _ = io.read_concept_table(paper_run / "data/concepts" / setting["dataset"] /
                                            f"{setting['concepts']['source'].replace(':', '-')}.parquet")
        for unit in setting["units"]:
            frame, metadata = io.read_activation_table(
                paper_run / "data/activations" / setting["dataset"] / unit["model"] / f"{unit['layer']}.parquet")
            assert frame["input_id"].tolist() == concepts["input_id"].tolist(), name
            assert (metadata["model"], metadata["layer"], metadata["dataset"]) == (
                unit["model"], unit["layer"], setting["dataset"])
        truth = pd.read_csv(paper_run / "data/truth" / f"{name}.csv", dtype=str)
        assert len(truth) > 0 and truth.columns.tolist() == ["unit", "concept"]
    nothing_left = run_tool(["snakemake", "-n", "--cores", "1", "results/table4.csv", *PROFILE], paper_run)
    assert "Nothing to be done" in nothing_left.stdout + nothing_left.stderr


def test_dry_run_plans_paper_004_on_the_profiles_checkpoint_and_corpus(paper_tree: tuple[Path, dict],
                                                                      tmp_path: Path) -> None:
    """concepteval_results under the profile: the corpus is cut by Pythia's tokenizer (external_text_dataset), then
    the concepteval rules read the external checkpoint; no embedded world or LM is built."""
    checkpoint, corpus = tmp_path / "pythia", tmp_path / "pile"
    checkpoint.mkdir()
    (checkpoint / "config.json").write_text("{}")
    corpus.mkdir()
    (corpus / "a.txt").write_text("some text")
    workspace = paper_workspace(tmp_path / "ws", paper_tree[0],
                                external={"models": {"pythia_70m": {"model_dir": str(checkpoint)}},
                                          "datasets": {"pile_pythia": {"path": str(corpus)}}})
    result = run_tool(["snakemake", "-n", "--cores", "1", "concepteval_results", *PROFILE], workspace)
    jobs = planned_jobs(result.stdout)
    assert_plan_is_needed_and_closed(jobs, ["concepteval_results"], workspace)
    assert [job.inputs for job in jobs if job.rule == "external_text_dataset"] == [(str(corpus), str(checkpoint))]
    profile = yaml.safe_load((ROOT / "profiles/paper.yaml").read_text())["concepteval"]
    for model in profile["models"]:  # each studied LM: its hidden states, SAE, concepts and both measurement runs
        for rule in ("concepteval_hidden", "concepteval_sae", "concepteval_concepts", "concepteval_measures"):
            assert any(f"/{model}/" in path for path in outputs_of(jobs, rule)), (rule, model)
        runs = {Path(path).stem for path in outputs_of(jobs, "concepteval_measures") if f"/{model}/" in path}
        assert {"test", "retest"} <= runs, runs
    assert {job.rule for job in jobs if job.rule.startswith("external_")} == {"external_text_dataset"}
    assert "data/external/pile_pythia/tokens.npy" in result.stdout


SPATIAL_FILES = ["explanations/imagenet_resnet50_layer4/netdissect.csv",
                 "explanations/imagenet_resnet50_layer4/compexp.csv"]


def test_dry_run_plans_explain_results_on_the_paper_settings(paper_tree: tuple[Path, dict], tmp_path: Path) -> None:
    """The profile's explain: block runs its run_settings only (no embedded world or model is built); the
    spatial methods of the hidden setting read the dataset's input table, the user's masks and the checkpoint."""
    masks = paper_tree[0] / "imagenet" / "concept_masks"  # written with the tree (tests.external.conftest)
    workspace = paper_workspace(tmp_path, paper_tree[0])
    result = run_tool(["snakemake", "-n", "--cores", "1", "explain_results", *PROFILE], workspace)
    jobs = planned_jobs(result.stdout)
    assert_plan_is_needed_and_closed(jobs, ["explain_results"], workspace)
    explain = yaml.safe_load((ROOT / "profiles/paper.yaml").read_text())["explain"]
    run_settings = explain["run_settings"]
    assert outputs_of(jobs, "explain_score") == {f"results/explain/scores/{name}.csv" for name in run_settings}
    assert outputs_of(jobs, "explain_crowd") == {f"results/explain/crowd/{name}.csv"
                                                 for name in explain["crowd"]["settings"]}
    scored = {path for job in jobs if job.rule == "explain_score" for path in job.inputs
              if path.startswith("explanations/")}
    assert outputs_of(jobs, "explain_setting") >= scored
    for name in run_settings:  # every listed method of every run setting is explained and scored
        for method in explain["settings"][name]["methods"]:
            assert f"explanations/{name}/{method}.csv" in scored, (name, method)
    assert "data/worlds/" not in result.stdout and "data/models/" not in result.stdout
    blocks = result.stdout.split("\n\n")
    for target in SPATIAL_FILES:
        job = next(block for block in blocks if "rule explain_setting:" in block and target in block)
        inputs = job.split("output:")[0]
        assert str(masks) in inputs and "data/external/imagenet_val/inputs.csv" in inputs
        assert f"{paper_tree[0]}/checkpoints/resnet50.pth" in inputs


def test_missing_masks_stop_snakemake_naming_the_key(paper_tree: tuple[Path, dict], tmp_path: Path) -> None:
    workspace = paper_workspace(tmp_path, paper_tree[0],
                                external={"datasets": {"imagenet_val": {"masks": "imagenet/gone"}}})
    result = run_tool(["snakemake", "-n", "--cores", "1", SPATIAL_FILES[0], *PROFILE], workspace, check=False)
    assert result.returncode != 0
    message = result.stdout + result.stderr
    assert f"external.datasets.imagenet_val.masks: {paper_tree[0]}/imagenet/gone does not exist" in message


@pytest.mark.slow
def test_an_external_spatial_explanation_runs_on_the_fakes(paper_tree: tuple[Path, dict], tmp_path: Path) -> None:
    """Slow (marker ``slow``): Snakemake runs the spatial explanation methods on the fake ResNet.

    Network Dissection and Compositional Explanations on the fake ResNet's layer4 maps against the fake masks:
    every channel gets a concept of the setting that has masks."""
    workspace = paper_workspace(tmp_path, paper_tree[0])
    run_tool(["snakemake", "--cores", "2", *SPATIAL_FILES, *PROFILE], workspace)
    masked = set(np.load(paper_tree[0] / "imagenet/concept_masks/concepts.npy").tolist())
    for target in SPATIAL_FILES:
        frame = read_explanations(workspace / target)
        assert len(frame) == 512 and set(frame["kind"]) <= {"concept", "formula"}, target
        named = {name for text in frame["explanation"] for name in masked if name in text}
        assert named and named <= masked
    log = (workspace / "logs/explain/imagenet_resnet50_layer4/netdissect.log").read_text()
    assert "7 of 7 concepts have masks" in log

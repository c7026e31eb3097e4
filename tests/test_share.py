"""neuroneval.pipeline.share without DVC: record names, export/import of Snakemake's records, stage parsing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from snakemake.persistence.file import FilePersistence

from neuroneval.pipeline import share

DVC_YAML = {"stages": {
    "worlds": {"cmd": "snakemake worlds && python -m neuroneval.pipeline.share export worlds",
               "outs": [{"data/worlds": {"persist": True}}, "snakemake-metadata/worlds.json"]},
    "results": {"cmd": "snakemake results/table4.csv results/ceiling.csv && python -m neuroneval.pipeline.share "
                       "export results",
                "outs": [{"results/meta": {"persist": True}}, {"results/table4.csv": {"persist": True}},
                         "snakemake-metadata/results.json"]},
}}


def record_file(workdir: Path, output: str) -> Path:
    """Where Snakemake 9 itself stores the record of ``output`` (its FilePersistence naming, the oracle)."""
    metadata_dir = workdir / share.METADATA_DIR
    metadata_dir.mkdir(parents=True, exist_ok=True)
    naming = FilePersistence.__new__(FilePersistence)  # only its record naming is used
    naming._max_len = None
    path = Path(naming._record_path(str(metadata_dir), output))
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def write_record(workdir: Path, output: str, params: str) -> Path:
    path = record_file(workdir, output)
    path.write_text(json.dumps({"rule": "r", "params": [params]}))
    return path


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "dvc.yaml").write_text(yaml.safe_dump(DVC_YAML))
    return tmp_path


@pytest.mark.parametrize("output", ["results/table4.csv", "data/worlds/vision/probe", "results/" + "x" * 400 + ".csv"])
def test_recorded_output_inverts_snakemakes_record_names(tmp_path: Path, output: str) -> None:
    path = record_file(tmp_path, output)
    assert share.recorded_output(path, tmp_path / share.METADATA_DIR) == output
    if len(output) > 300:  # a long name is split into '@'-prefixed directories
        assert path.parent != tmp_path / share.METADATA_DIR


def test_export_then_import_restores_exactly_the_stage_records(workdir: Path) -> None:
    kept = [write_record(workdir, name, name) for name in ("data/worlds/vision/probe", "data/worlds/text/train")]
    other = write_record(workdir, "data/models/clip.pt", "clip")
    exported = share.export_metadata(workdir, "worlds")
    assert exported == workdir / "snakemake-metadata" / "worlds.json"
    records = json.loads(exported.read_text())
    assert sorted(records) == sorted(path.relative_to(workdir / share.METADATA_DIR).as_posix() for path in kept)
    texts = {path: path.read_text() for path in kept}

    for path in (*kept, other):
        path.unlink()
    (workdir / "data/worlds/vision/probe").mkdir(parents=True)  # pulled; data/worlds/text/train is not
    assert share.import_metadata(workdir) == 1
    assert kept[0].read_text() == texts[kept[0]]
    assert not kept[1].exists() and not other.exists()


def test_export_names_the_stage_without_records(workdir: Path) -> None:
    write_record(workdir, "results/table4.csv", "t")
    with pytest.raises(ValueError, match="stage 'worlds': no Snakemake records"):
        share.export_metadata(workdir, "worlds")
    with pytest.raises(ValueError, match="no stage 'cosy'"):
        share.export_metadata(workdir, "cosy")


def test_stage_outputs_targets_and_missing(workdir: Path) -> None:
    stages = share.stages(workdir / "dvc.yaml")
    assert share.stage_outputs(stages["results"]) == ["results/meta", "results/table4.csv"]
    assert share.stage_targets(stages["results"]) == ["results/table4.csv", "results/ceiling.csv"]
    (workdir / "results/meta").mkdir(parents=True)
    assert share.missing_outputs(workdir) == {"worlds": ("data/worlds",), "results": ("results/table4.csv",)}
    with pytest.raises(ValueError, match="does not start with `snakemake"):
        share.stage_targets({"cmd": "python build.py"})


def test_unreadable_inputs_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "dvc.yaml").write_text("stages: [")
    with pytest.raises(ValueError, match=r"dvc\.yaml: cannot read"):
        share.stages(tmp_path / "dvc.yaml")
    (tmp_path / "snakemake-metadata").mkdir()
    (tmp_path / "snakemake-metadata" / "worlds.json").write_text("{")
    with pytest.raises(ValueError, match=r"worlds\.json: not a metadata export"):
        share.import_metadata(tmp_path)


def test_report_names_missing_stages() -> None:
    partly = tuple(f"results/table{number}.csv" for number in range(6))
    report = share.PullReport(("worlds",), {"cosy": ("data/cosy",), "sanity": partly, "crowd": ("a", "b")}, 3,
                              {"worlds": 1, "cosy": 1, "sanity": 9, "crowd": 2})
    assert report.summary().splitlines() == [
        "pulled stages: worlds (3 Snakemake records restored)",
        "not on the remote (build them with `make repro` or `dvc repro <stage>`, then `dvc push`):",
        "  cosy: data/cosy",
        "  sanity: results/table0.csv, results/table1.csv, results/table2.csv, results/table3.csv and 2 more",
        "  crowd: all 2 outputs",
    ]

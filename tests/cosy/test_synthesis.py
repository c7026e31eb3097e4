"""Image sets on disk: manifest, seeds independent of order and batching, resume, config changes, bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from neuroneval.cosy import OracleGenerator, image_seed
from neuroneval.cosy.synthesis import (
    MANIFEST_COLUMNS,
    load_images,
    plan_images,
    prompt_slug,
    read_manifest,
    resize_images,
    synthesize,
    throughput,
    write_manifest,
)
from neuroneval.worlds import build_vision_world

EXPLANATIONS = ["a red striped circle", "a square", "on grass"]


class CountingOracle(OracleGenerator):
    """The oracle, counting the images it is asked for."""

    def __init__(self, world_params, noise_std=None) -> None:
        params = dict(world_params)
        if noise_std is not None:
            params["noise_std"] = noise_std
        super().__init__(params)
        self.calls: list[int] = []

    def generate(self, prompts, seeds):
        self.calls.append(len(prompts))
        return super().generate(prompts, seeds)


@pytest.fixture(scope="module")
def world_params() -> dict:
    return build_vision_world(2, seed=0, split="probe", n_classes=16).params


def _bytes(root: Path, manifest: pd.DataFrame) -> list[bytes]:
    return [(root / path).read_bytes() for path in manifest["path"]]


def test_plan_and_manifest(world_params: dict, tmp_path: Path) -> None:
    plan = plan_images(EXPLANATIONS, templates=["closeup", "a"], n_images=3, generation_seeds=[0, 5])
    assert len(plan) == 3 * 2 * 2 * 3
    row = plan[(plan["template"] == "a") & (plan["explanation"] == "a square") & (plan["generation_seed"] == 5)]
    assert row["prompt"].iloc[0] == "a a square"
    assert row["seed"].tolist() == [image_seed("a a square", index, generation_seed=5) for index in range(3)]
    assert row["path"].iloc[2] == f"{prompt_slug('a a square')}/5-00002.png"
    manifest, report = synthesize(OracleGenerator(world_params), plan, tmp_path / "oracle", progress=False)
    assert list(manifest.columns) == MANIFEST_COLUMNS
    assert report["generated"] == len(plan) and report["reused"] == 0 and report["images_per_second"] > 0
    assert manifest["config_hash"].nunique() == 1 and (manifest["generator"] == "oracle").all()
    write_manifest(tmp_path / "oracle" / "manifest.parquet", manifest)
    read_back = read_manifest(tmp_path / "oracle" / "manifest.parquet")
    pd.testing.assert_frame_equal(read_back, manifest)
    images = load_images(tmp_path / "oracle", manifest["path"].tolist())
    assert images.shape == (len(plan), 32, 32, 3) and images.dtype == np.uint8


def test_order_and_batching_do_not_change_bytes(world_params: dict, tmp_path: Path) -> None:
    plan = plan_images(EXPLANATIONS, templates=["closeup"], n_images=4)
    first, _ = synthesize(OracleGenerator(world_params), plan, tmp_path / "a", batch_size=5, progress=False)
    shuffled = plan.sample(frac=1.0, random_state=1)
    second, _ = synthesize(OracleGenerator(world_params), shuffled, tmp_path / "b", batch_size=1, progress=False)
    pd.testing.assert_frame_equal(first, second)
    assert _bytes(tmp_path / "a", first) == _bytes(tmp_path / "b", second)
    # a prompt's images do not depend on which other prompts are generated
    alone, _ = synthesize(OracleGenerator(world_params), plan[plan["explanation"] == "a square"], tmp_path / "c",
                          progress=False)
    assert _bytes(tmp_path / "c", alone) == _bytes(tmp_path / "a", first[first["explanation"] == "a square"])


def test_resume_generates_only_missing_images(world_params: dict, tmp_path: Path) -> None:
    plan = plan_images(EXPLANATIONS, templates=["closeup"], n_images=4)
    root = tmp_path / "oracle"
    manifest, _ = synthesize(OracleGenerator(world_params), plan, root, batch_size=4, progress=False)
    complete = _bytes(root, manifest)
    for path in manifest["path"].iloc[[1, 5, 6]]:
        (root / path).unlink()  # an interrupted run
    generator = CountingOracle(world_params)
    resumed, report = synthesize(generator, plan, root, batch_size=4, progress=False)
    assert generator.calls == [3] and report == {**report, "generated": 3, "reused": len(plan) - 3}
    assert _bytes(root, resumed) == complete
    again = CountingOracle(world_params)
    synthesize(again, plan, root, progress=False)
    assert again.calls == []
    # throughput counts only generated images, over every run of this config
    rate = throughput(root)
    assert rate["generated"] == len(plan) + 3 and rate["images_per_second"] > 0


def test_changed_config_regenerates(world_params: dict, tmp_path: Path) -> None:
    plan = plan_images(EXPLANATIONS[:1], templates=["closeup"], n_images=2)
    root = tmp_path / "oracle"
    first, _ = synthesize(OracleGenerator(world_params), plan, root, progress=False)
    changed = CountingOracle(world_params, noise_std=0.0)
    second, report = synthesize(changed, plan, root, progress=False)
    assert report["generated"] == 2 and changed.calls == [2]
    assert first["config_hash"].iloc[0] != second["config_hash"].iloc[0]


def test_bad_input(world_params: dict, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no explanations"):
        plan_images([], templates=["closeup"], n_images=2)
    with pytest.raises(ValueError, match="n_images"):
        plan_images(["a square"], templates=["closeup"], n_images=0)
    plan = plan_images(["a dog"], templates=["closeup"], n_images=1)
    with pytest.raises(ValueError, match="a close up of a dog"):
        synthesize(OracleGenerator(world_params), plan, tmp_path / "oracle", progress=False)
    good = plan_images(["a square"], templates=["closeup"], n_images=2)
    manifest, _ = synthesize(OracleGenerator(world_params), good, tmp_path / "ok", progress=False)
    write_manifest(tmp_path / "ok" / "manifest.parquet", manifest)
    (tmp_path / "ok" / manifest["path"].iloc[0]).unlink()
    with pytest.raises(FileNotFoundError, match="1 listed image"):
        read_manifest(tmp_path / "ok" / "manifest.parquet")
    with pytest.raises(ValueError, match="lacks column"):
        write_manifest(tmp_path / "bad.parquet", manifest.drop(columns="seed"))


def test_resize_images() -> None:
    images = np.zeros((2, 64, 64, 3), dtype=np.uint8)
    images[:, :32] = 200
    small = resize_images(images, 32)
    assert small.shape == (2, 32, 32, 3) and small[0, 0, 0, 0] == 200 and small[0, -1, 0, 0] == 0
    assert resize_images(small, 32) is small

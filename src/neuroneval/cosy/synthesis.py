"""Synthetic image sets (paper 002 Sec. 3 step 1) as files: one PNG per image plus a manifest table.

Layout under a generator's root (``data/cosy/<generator>/``)::

    generator.json                      the generator's config and its hash
    generation_runs.jsonl               one line per generation run: images generated, seconds (throughput)
    <prompt-slug>/<gseed>-<index>.png   image ``index`` of the prompt under generation seed ``gseed``
    manifest.parquet                    one row per image: prompt, template, explanation, image index, seed, ...

Each image's seed is :func:`~neuroneval.cosy.image_generator.image_seed` of (generation seed, prompt, index), so a set
does not depend on the order or batching of generation. Generation resumes: images whose file exists (under the
same generator config) are kept; a changed config invalidates the root's images first.
"""

from __future__ import annotations

import json
import re
import shutil
import time
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from neuroneval import io
from neuroneval.cosy.image_generator import ImageGenerator, config_hash, image_seed
from neuroneval.cosy.prompts import fill_template
from neuroneval.progress import progress_bar

MANIFEST_COLUMNS = ["prompt", "template", "explanation", "generation_seed", "image_index", "seed", "generator",
                    "config_hash", "path"]
SLUG_LENGTH = 60
THROUGHPUT_LOG = "generation_runs.jsonl"


def prompt_slug(prompt: str) -> str:
    """A folder name for a prompt: lower-case words joined by ``-`` (cut), then the prompt's CRC-32 in hex.

    >>> prompt_slug("realistic photo of a close up of a red striped circle")
    'realistic-photo-of-a-close-up-of-a-red-striped-circle-74bc7287'
    """
    words = re.sub(r"[^a-z0-9]+", "-", prompt.lower()).strip("-")[:SLUG_LENGTH].strip("-") or "prompt"
    return f"{words}-{zlib.crc32(prompt.encode('utf-8')):08x}"


def plan_images(explanations: Sequence[str], *, templates: Sequence[str], n_images: int,
                generation_seeds: Sequence[int] = (0,)) -> pd.DataFrame:
    """Every image an evaluation needs: explanations × templates × generation seeds × ``n_images``.

    Returns the manifest rows without ``generator``/``config_hash`` (one row per image, duplicates removed,
    sorted by path). Raises ``ValueError`` on an empty explanation list or ``n_images < 1``.
    """
    explanations = [str(text) for text in explanations]
    if not explanations:
        raise ValueError("no explanations to generate images for")
    if int(n_images) < 1:
        raise ValueError(f"n_images must be >= 1, got {n_images}")
    rows = []
    for explanation in dict.fromkeys(explanations):
        for template in dict.fromkeys(templates):
            prompt = fill_template(template, explanation)
            slug = prompt_slug(prompt)
            for generation_seed in dict.fromkeys(int(seed) for seed in generation_seeds):
                for index in range(int(n_images)):
                    rows.append({"prompt": prompt, "template": template, "explanation": explanation,
                                 "generation_seed": generation_seed, "image_index": index,
                                 "seed": image_seed(prompt, index, generation_seed=generation_seed),
                                 "path": f"{slug}/{generation_seed}-{index:05d}.png"})
    plan = pd.DataFrame(rows).drop_duplicates(["prompt", "generation_seed", "image_index"])
    return plan.sort_values("path", kind="stable").reset_index(drop=True)


def _write_png(path: Path, image: np.ndarray) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    with io.atomic_path(path) as tmp_path:
        Image.fromarray(image, mode="RGB").save(tmp_path, format="PNG")


def read_png(path: str | Path) -> np.ndarray:
    """An (H, W, 3) uint8 RGB image from a PNG file."""
    from PIL import Image

    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"), dtype=np.uint8)


def _check_root(root: Path, generator: ImageGenerator) -> str:
    """The generator's config hash; images of another config under ``root`` are removed first."""
    config = generator.config()
    digest = config_hash(config)
    record = root / "generator.json"
    if record.exists():
        previous = json.loads(record.read_text())
        if previous.get("config_hash") != digest:
            print(f"{root}: generator config changed ({previous.get('config_hash')} -> {digest}); "
                  "removing its old images")
            for child in root.iterdir():
                if child.is_dir():
                    shutil.rmtree(child)
    root.mkdir(parents=True, exist_ok=True)
    io.write_json(record, {"config_hash": digest, "config": config})
    return digest


def synthesize(generator: ImageGenerator, plan: pd.DataFrame, root: str | Path, *, batch_size: int = 64,
               progress: bool = True) -> tuple[pd.DataFrame, dict[str, float]]:
    """Generate the planned images that are not on disk yet and return the manifest and a throughput report.

    Parameters
    ----------
    generator
        Any :class:`~neuroneval.cosy.image_generator.ImageGenerator`.
    plan
        Rows of :func:`plan_images`.
    root
        The generator's folder (``data/cosy/<generator>``); PNG paths in the plan are relative to it.
    batch_size
        Images per ``generate`` call (the images do not depend on it).

    Returns
    -------
    manifest, report
        The manifest (:data:`MANIFEST_COLUMNS`, sorted by path) and ``{"generated", "reused", "seconds",
        "images_per_second"}`` for this call.
    """
    root = Path(root)
    if int(batch_size) < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    digest = _check_root(root, generator)
    missing = plan[[not (root / path).exists() for path in plan["path"]]]
    started = time.perf_counter()
    with progress_bar(total=len(missing), desc=f"cosy {generator.name}", unit="img", enabled=progress) as bar:
        for start in range(0, len(missing), int(batch_size)):
            batch = missing.iloc[start : start + int(batch_size)]
            images = generator.generate(batch["prompt"].tolist(), batch["seed"].tolist())
            for path, image in zip(batch["path"], images, strict=True):
                _write_png(root / path, image)
            bar.update(len(batch))
    seconds = time.perf_counter() - started
    manifest = plan.assign(generator=generator.name, config_hash=digest)[MANIFEST_COLUMNS]
    manifest = manifest.sort_values("path", kind="stable").reset_index(drop=True)
    report = {"generated": len(missing), "reused": int(len(plan) - len(missing)), "seconds": seconds,
              "images_per_second": len(missing) / seconds if len(missing) and seconds > 0 else None}
    if len(missing):
        with open(root / THROUGHPUT_LOG, "a") as log:
            log.write(json.dumps({"config_hash": digest, "generated": len(missing), "seconds": seconds,
                                  "batch_size": int(batch_size)}) + "\n")
    return manifest, report


def throughput(root: str | Path) -> dict[str, float | int | None]:
    """Images per second over every generation run logged under ``root`` for its current config.

    Resumed and reused images cost nothing, so the rate counts only images actually generated
    (``{"generated", "seconds", "images_per_second"}``; ``None`` when nothing was generated yet).
    """
    root = Path(root)
    record, log = root / "generator.json", root / THROUGHPUT_LOG
    if not record.exists() or not log.exists():
        return {"generated": 0, "seconds": 0.0, "images_per_second": None}
    digest = json.loads(record.read_text())["config_hash"]
    runs = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    runs = [run for run in runs if run["config_hash"] == digest]
    generated = sum(run["generated"] for run in runs)
    seconds = sum(run["seconds"] for run in runs)
    return {"generated": generated, "seconds": seconds,
            "images_per_second": generated / seconds if generated and seconds > 0 else None}


def write_manifest(path: str | Path, manifest: pd.DataFrame) -> Path:
    """Write a manifest Parquet atomically (columns :data:`MANIFEST_COLUMNS`)."""
    missing = [column for column in MANIFEST_COLUMNS if column not in manifest.columns]
    if missing:
        raise ValueError(f"{path}: manifest lacks column(s) {missing}")
    with io.atomic_path(path) as tmp_path:
        manifest[MANIFEST_COLUMNS].to_parquet(tmp_path, index=False)
    return Path(path)


def read_manifest(path: str | Path) -> pd.DataFrame:
    """Read and validate a manifest: its columns, unique paths, and image files that exist beside it."""
    path = Path(path)
    manifest = pd.read_parquet(path)
    missing = [column for column in MANIFEST_COLUMNS if column not in manifest.columns]
    if missing:
        raise ValueError(f"{path}: manifest lacks column(s) {missing}")
    duplicated = manifest["path"][manifest["path"].duplicated()]
    if len(duplicated):
        raise ValueError(f"{path}: image path {duplicated.iloc[0]!r} is listed twice")
    absent = [name for name in manifest["path"] if not (path.parent / name).exists()]
    if absent:
        raise FileNotFoundError(f"{path}: {len(absent)} listed image(s) are missing, e.g. {absent[0]!r}")
    return manifest


def load_images(root: str | Path, paths: Sequence[str]) -> np.ndarray:
    """Stack the PNGs at ``paths`` (relative to ``root``) into (N, H, W, 3) uint8."""
    if len(paths) == 0:
        raise ValueError("no images to load")
    return np.stack([read_png(Path(root) / path) for path in paths])


def resize_images(images: np.ndarray, size: int) -> np.ndarray:
    """Square-resize (N, H, W, 3) uint8 images to ``size`` (PIL box filter when shrinking); same size = unchanged."""
    if images.shape[1] == size and images.shape[2] == size:
        return images
    from PIL import Image

    resample = Image.Resampling.BOX if images.shape[1] > size else Image.Resampling.BILINEAR
    return np.stack([np.asarray(Image.fromarray(image).resize((size, size), resample)) for image in images])

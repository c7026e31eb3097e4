"""Workflow step of the neuron viewer (``workflow/rules/viewer.smk``; library code in
:mod:`neuroneval.figures.viewer`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from neuroneval.pipeline.runner import StepIO


def viewer_setting(job: StepIO) -> None:
    """``results/viewer/<setting>/index.html``: one card per unit with a known concept (params ``viewer``); an
    external image dataset's inputs are shown from its ``inputs.csv`` (``input_id,path`` under ``media_root``), an
    own dataset's from its media (``own_media``: :mod:`neuroneval.external.own_media`, checked against the first
    activation table; images enlarged to ``THUMBNAIL_MIN_SIZE`` pixels)."""
    from neuroneval.figures.viewer import build_viewer, passing_metrics, write_viewer
    from neuroneval.input_media import read_image_table

    knobs = job.params.viewer
    chosen = knobs.get("metrics", "sanity")
    metrics = passing_metrics(pd.read_csv(job.input.table3)) if chosen == "sanity" else list(chosen)
    notes = ["no metric passes both sanity tests in results/table3.csv"] if chosen == "sanity" and not metrics else []
    explanation_files = [Path(path) for path in getattr(job.input, "explanations", [])]
    max_units = knobs.get("max_units")
    media, min_size = None, 0
    if job.params.own_media:
        from neuroneval.external.own_media import THUMBNAIL_MIN_SIZE, viewer_media

        media, note = viewer_media(job.params.own_media, job.input.activations[0])
        min_size, notes = THUMBNAIL_MIN_SIZE, notes + ([note] if note else [])
    elif hasattr(job.input, "media"):
        media = read_image_table(job.input.media, root=job.params.media_root)
    page = build_viewer(
        job.wildcards.setting,
        job.params.setting,
        activation_files=[Path(path) for path in job.input.activations],
        concept_file=Path(job.input.concepts),
        truth_file=Path(job.input.truth),
        metrics=metrics,
        top_k=int(knobs.get("top_inputs", 8)),
        max_units=None if max_units is None else int(max_units),
        explanation_files=explanation_files,
        data_root=Path(job.input.world).parents[2] if hasattr(job.input, "world") else None,
        scale=int(knobs.get("thumbnail_scale", 2)),
        context=int(knobs.get("context_tokens", 12)),
        description=job.params.description,
        notes=notes,
        media=media,
        min_size=min_size,
    )
    write_viewer(job.output[0], page)
    print(f"{job.wildcards.setting}: viewer with metrics {metrics}, {len(explanation_files)} explanation tables")

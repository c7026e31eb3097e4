"""Snakemake entry point: see neuroneval.pipeline.probing_tables_steps.vision_label_concepts."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.probing_tables_steps import vision_label_concepts

run_step(vision_label_concepts, snakemake)  # noqa: F821 (injected by Snakemake)

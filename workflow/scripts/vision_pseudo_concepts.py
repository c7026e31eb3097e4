"""Snakemake entry point: see neuroneval.pipeline.probing_tables_steps.vision_pseudo_concepts."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.probing_tables_steps import vision_pseudo_concepts

run_step(vision_pseudo_concepts, snakemake)  # noqa: F821 (injected by Snakemake)

"""Snakemake entry point: see neuroneval.pipeline.contrastive_steps.vision_pseudo_concepts."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.contrastive_steps import vision_pseudo_concepts

run_step(vision_pseudo_concepts, snakemake)  # noqa: F821 (injected by Snakemake)

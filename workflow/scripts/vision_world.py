"""Snakemake entry point: see neuroneval.pipeline.worlds_steps.vision_world."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.worlds_steps import vision_world

run_step(vision_world, snakemake)  # noqa: F821 (injected by Snakemake)

"""Snakemake entry point: see neuroneval.pipeline.worlds_steps.text_world."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.worlds_steps import text_world

run_step(text_world, snakemake)  # noqa: F821 (injected by Snakemake)

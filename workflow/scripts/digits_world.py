"""Snakemake entry point: see neuroneval.pipeline.worlds_steps.digits_world."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.worlds_steps import digits_world

run_step(digits_world, snakemake)  # noqa: F821 (injected by Snakemake)

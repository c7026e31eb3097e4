"""Snakemake entry point: see neuroneval.pipeline.steps.ceiling."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.steps import ceiling

run_step(ceiling, snakemake)  # noqa: F821 (injected by Snakemake)

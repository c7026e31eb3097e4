"""Snakemake entry point: see neuroneval.pipeline.meta_steps.ceiling."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.meta_steps import ceiling

run_step(ceiling, snakemake)  # noqa: F821 (injected by Snakemake)

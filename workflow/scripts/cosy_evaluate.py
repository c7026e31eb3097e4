"""Snakemake entry point: see neuroneval.pipeline.cosy_steps.cosy_evaluate."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.cosy_steps import cosy_evaluate

run_step(cosy_evaluate, snakemake)  # noqa: F821 (injected by Snakemake)

"""Snakemake entry point: see neuroneval.pipeline.cosy_steps.cosy_explanations."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.cosy_steps import cosy_explanations

run_step(cosy_explanations, snakemake)  # noqa: F821 (injected by Snakemake)

"""Snakemake entry point: see neuroneval.pipeline.cosy_steps.cosy_generate."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.cosy_steps import cosy_generate

run_step(cosy_generate, snakemake)  # noqa: F821 (injected by Snakemake)

"""Snakemake entry point: see neuroneval.pipeline.crowd_steps.crowd_sampling."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.crowd_steps import crowd_sampling

run_step(crowd_sampling, snakemake)  # noqa: F821 (injected by Snakemake)

"""Snakemake entry point: see neuroneval.pipeline.models_steps.train_probe."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.models_steps import train_probe

run_step(train_probe, snakemake)  # noqa: F821 (injected by Snakemake)

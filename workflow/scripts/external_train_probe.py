"""Snakemake entry point: see neuroneval.pipeline.external_steps.external_train_probe."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.external_steps import external_train_probe

run_step(external_train_probe, snakemake)  # noqa: F821 (injected by Snakemake)

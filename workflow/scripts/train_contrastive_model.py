"""Snakemake entry point: see neuroneval.pipeline.models_steps.train_contrastive_model."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.models_steps import train_contrastive_model

run_step(train_contrastive_model, snakemake)  # noqa: F821 (injected by Snakemake)

"""Snakemake entry point: see neuroneval.pipeline.models_steps.train_vision_classifier."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.models_steps import train_vision_classifier

run_step(train_vision_classifier, snakemake)  # noqa: F821 (injected by Snakemake)

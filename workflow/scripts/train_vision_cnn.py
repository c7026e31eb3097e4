"""Snakemake entry point: see neuroneval.pipeline.steps.train_vision_cnn."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.steps import train_vision_cnn

run_step(train_vision_cnn, snakemake)  # noqa: F821 (injected by Snakemake)

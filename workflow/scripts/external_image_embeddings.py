"""Snakemake entry point: see neuroneval.pipeline.external_steps.external_image_embeddings."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.external_steps import external_image_embeddings

run_step(external_image_embeddings, snakemake)  # noqa: F821 (injected by Snakemake)

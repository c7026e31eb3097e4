"""Snakemake entry point: see neuroneval.pipeline.probing_tables_steps.text_label_concepts."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.probing_tables_steps import text_label_concepts

run_step(text_label_concepts, snakemake)  # noqa: F821 (injected by Snakemake)

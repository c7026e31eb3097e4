"""Snakemake entry point of every rule: runs the step function its ``step`` param names (neuroneval.pipeline)."""

from neuroneval.pipeline import run_rule

run_rule(snakemake)  # noqa: F821 (injected by Snakemake)

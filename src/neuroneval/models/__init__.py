"""Models probed by the workflow: tiny models trained in the DAG, and loaders for real checkpoints."""

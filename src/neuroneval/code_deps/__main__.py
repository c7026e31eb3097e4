"""``python -m neuroneval.code_deps``: print the code deps each stage of dvc.yaml should have."""

from neuroneval.code_deps.workflow import main

main()

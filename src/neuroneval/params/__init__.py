"""The workflow's params (``params.yaml`` and its ``--configfile`` overlays) as the library sees them before a job
runs: :mod:`neuroneval.params.check` finds every problem at once and gives the canonical config. The package's top
level imports nothing."""

"""Recording unit activations with forward hooks and turning them into activation tables."""

from neuroneval.activations.extract import (
    OUTPUT_LAYERS,
    activation_frame,
    record_activations,
    superclass_units,
)

__all__ = ["OUTPUT_LAYERS", "activation_frame", "record_activations", "superclass_units"]

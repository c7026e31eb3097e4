"""neuroneval: evaluate neuron explanations and the metrics used to evaluate them."""

__version__ = "0.1.0"

"""Every figure of the workflow and the neuron viewer, drawn in one style (docs/figures.md).

- :mod:`~neuroneval.figures.style`: palette, per-metric looks grouped by family, direct labels, passing regions,
  the one atomic and byte-reproducible ``savefig``;
- :mod:`~neuroneval.figures.results` (Table 4, ceiling, explanation methods), :mod:`~neuroneval.figures.sanity`
  (Figure 3, tie modes), :mod:`~neuroneval.figures.crowd`, :mod:`~neuroneval.figures.cosy`,
  :mod:`~neuroneval.figures.concepteval`: the figures, one function per file the workflow writes;
- :mod:`~neuroneval.figures.viewer`: the static, offline neuron viewer (``results/viewer/<setting>/index.html``);
- :mod:`~neuroneval.figures.world_preview`: a contact sheet of a vision world's images, to check its rendering.

Modules are imported where used (matplotlib is not loaded by ``import neuroneval.figures``).
"""

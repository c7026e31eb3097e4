"""The explanation methods scored by the other scorers: Table 3 of the explanation benchmark (paper 001).

The explanation methods (:mod:`neuroneval.explain`) write explanation files; here their simple (l = 1)
explanations are scored by CoSy (paper 002, :mod:`.cosy_table3`) and by a simulated crowd study (paper 001,
:mod:`.crowd_table3`), with the ceiling rows ``ideal`` (the truth explanations on the world's ideal units,
:mod:`neuroneval.explain.ideal`). The package sits above ``explain``, ``cosy`` and ``crowd``: it imports all three,
and none of them imports it (``docs/architecture.md``, Layers). Its top level imports nothing, so a reader of one
scorer does not load the other.
"""

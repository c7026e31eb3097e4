"""The memory budget of a scoring call (``memory_budget=``) and the unit blocks and concept chunks it allows.

Beyond its inputs and its result, a call holds at once

* one *concept chunk*: the chunk's float64 values and the features the kernel derives from them (0/1 labels,
  ranks, logs), built in row blocks — about :data:`CONCEPT_BYTES` bytes per (concept, input);
* the kernel's temporaries (gathers, the sorts of AUPRC), each at most ``work_elements`` elements — about
  ``TEMP_BYTES[metric]`` bytes per work element in all;
* one *unit block*: the units' float64 rows and the features the metric derives from them (top-α
  binarization, ranks, standardized rows), built in row blocks — at most ``UNIT_BYTES[metric]`` bytes per
  (unit, input);
* when the units need several blocks and the metric sorts its concepts (:data:`STORED_CONCEPT_FEATURES`),
  those sorted features of every concept as float32 (:data:`STORE_BYTES` per (concept, input)), so that later
  blocks do not sort the concepts again; Spearman's ranks on the numpy backend as uint16 tie-run starts
  (:data:`COMPACT_STORE_BYTES`, :func:`compact_plan`), which fit where float32 ranks do not.

:func:`plan` gives a quarter of the budget to the concept chunk, an eighth to the temporaries, and the rest to
the store (when it leaves at least a quarter of the rest) and to the unit block. The engine scores block by block,
each block against every chunk, so the peak stays near the budget whatever K, C and n are; only the time
grows (a few concept features are prepared once per block). The byte constants are measured peaks
(``tracemalloc``) with a margin; tests/metrics/test_memory.py checks them.

Settings: an integer number of bytes (at least :data:`MIN_BUDGET`); ``"auto"`` (default), the size of the
inputs as float32, ``4·n·(K + C)`` bytes, but at least :data:`AUTO_FLOOR`; ``"unbounded"``, the engine before
budgets: every unit in one block and :data:`~neuroneval.metrics.context.WORK_ELEMENTS`-element temporaries and
chunks (fastest on small tables; peak ≈ 10–20× the inputs for rank metrics on large ones). A budget too small
for one unit and one concept is exceeded by that much.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from neuroneval.metrics.context import WORK_ELEMENTS

AUTO = "auto"
UNBOUNDED = "unbounded"
BUDGET_SETTINGS = (AUTO, UNBOUNDED)

#: Smallest integer budget accepted (16 MiB).
MIN_BUDGET = 2**24
#: Smallest budget ``"auto"`` gives (256 MiB): small tables are scored in one block, as before budgets.
AUTO_FLOOR = 2**28
#: Bytes per (concept, input) of a concept chunk: its float64 values and derived features (rows, labels, ranks).
CONCEPT_BYTES = 32
#: Bytes per work element of a kernel's temporaries: the AUPRC kernels sort gathered counts (about 8 int64 and
#: float64 copies of a block); the other kernels hold a few float64 copies at most.
TEMP_BYTES: Mapping[str, int] = MappingProxyType({"auprc": 64, "inverse_auprc": 64})
DEFAULT_TEMP_BYTES = 16
#: Metrics whose concept features need a sort (ranks, counts): kept across unit blocks when they fit.
STORED_CONCEPT_FEATURES = frozenset({"auc", "spearman", "auprc"})
#: Bytes per (concept, input) of a kept concept feature (float32, exact for ranks and counts below 2**23 inputs).
STORE_BYTES = 4
#: Metrics whose kept concept ranks may be *compact*: each input's first sorted place of its tie run as uint16
#: (below 2**16 inputs; :func:`neuroneval.metrics.rank_kernels.tie_firsts`), the exact average ranks decoded per
#: unit block. Used where the engine's :func:`compact_ranks_apply` (numpy backend, average ties, float32 concepts).
COMPACT_RANK_METRICS = frozenset({"spearman"})
#: Bytes per (concept, input) of compact kept ranks.
COMPACT_STORE_BYTES = 2
#: Fewest work elements a plan uses, however small the budget.
MIN_WORK_ELEMENTS = 2**16
#: Bytes per (grid point, unit, input) of the α-dependent unit features a grid pass stacks (0/1 float32 and its
#: float64 copy).
POINT_BYTES = 12

#: Peak bytes per (unit, input) element of a unit block's features, transients included (see the module
#: docstring). Every unit block starts from the float64 rows (8 bytes) and, for the GEMM-type kernels with
#: sparse concepts, an inputs-major copy of the unit side (8 bytes).
UNIT_BYTES: Mapping[str, int] = MappingProxyType({
    "recall": 20,
    "precision": 20,
    "f1": 20,
    "iou": 20,
    "accuracy": 20,
    "balanced_accuracy": 20,
    "inverse_balanced_accuracy": 20,
    "auc": 24,
    "inverse_auc": 28,
    "correlation": 28,
    "correlation_tr": 48,
    "spearman": 28,
    "spearman_tr": 48,
    "cosine": 28,
    "wpmi": 24,
    "mad": 28,
    "auprc": 20,
    "inverse_auprc": 24,
})


@dataclass(frozen=True)
class ChunkPlan:
    """How one call is cut: ``unit_block`` units per block; ``concept_chunk`` concepts per chunk (``None``: the
    engine's fixed ``work_elements / 4n``); temporaries of at most ``work_elements`` elements; at most
    ``grid_points`` grid points (α/λ settings) stacked per pass over the concepts; whether the sorted concept
    features are kept for later unit blocks (``store_concepts``, :meth:`ConceptChunk.stored`)."""

    unit_block: int
    concept_chunk: int | None
    work_elements: int
    grid_points: int
    store_concepts: bool = False
    compact_ranks: bool = False


def compact_ranks_apply(metric: str, backend_name: str, noised_ties: bool, n: int, concept_dtype: object) -> bool:
    """Whether ``metric``'s kept concept ranks can be compact (:data:`COMPACT_RANK_METRICS`): numpy backend, average
    (not noised) ties, fewer than 2**16 inputs and an exactly-float32 concept table (the compiled sort's input)."""
    return (metric in COMPACT_RANK_METRICS and backend_name == "numpy" and not noised_ties and n < 2**16
            and concept_dtype == "float32")


def budget_bytes(setting: int | str, n: int, n_units: int, n_concepts: int) -> int | None:
    """The budget in bytes of a ``memory_budget`` setting for inputs (n, K) and (n, C); ``None`` when unbounded."""
    if setting == UNBOUNDED:
        return None
    if setting == AUTO:
        return max(AUTO_FLOOR, 4 * n * (n_units + n_concepts))
    return int(setting)


def plan(metric: str, budget: int | None, n: int, n_units: int, n_concepts: int, *,
         unit_room: int = 0) -> ChunkPlan:
    """Unit blocks, concept chunks, work elements, grid points per pass and concept store for ``metric``.

    ``budget`` in bytes (``None``: unbounded, see the module docstring); inputs n × ``n_units`` and n ×
    ``n_concepts``. ``unit_room`` is memory the caller already set aside for unit features (a
    :class:`~neuroneval.metrics.context.FeatureCache`'s ``max_bytes``): unit blocks may use that much when it is
    more than the budget leaves them.
    """
    return _plan(metric, budget, n, n_units, n_concepts, unit_room, compact_ranks=False)


def compact_plan(metric: str, budget: int | None, n: int, n_units: int, n_concepts: int, *,
                 unit_room: int = 0) -> ChunkPlan:
    """:func:`plan` for a call whose kept concept ranks are compact (:func:`compact_ranks_apply`):
    :data:`COMPACT_STORE_BYTES` instead of :data:`STORE_BYTES` per (concept, input), so they are kept (and the
    concepts sorted once) where float32 ranks would not fit."""
    return _plan(metric, budget, n, n_units, n_concepts, unit_room, compact_ranks=True)


def _plan(metric: str, budget: int | None, n: int, n_units: int, n_concepts: int, unit_room: int, *,
          compact_ranks: bool) -> ChunkPlan:
    """The plan of :func:`plan` and :func:`compact_plan`."""
    n_units, n = max(1, n_units), max(1, n)
    if budget is None:
        return ChunkPlan(n_units, None, WORK_ELEMENTS, 2**62)
    temp_bytes = TEMP_BYTES.get(metric, DEFAULT_TEMP_BYTES)
    work = min(WORK_ELEMENTS, max(MIN_WORK_ELEMENTS, budget // 8 // temp_bytes))
    chunk = max(1, min(max(1, n_concepts), budget // 4 // (n * CONCEPT_BYTES)))
    left = max(0, budget - work * temp_bytes - chunk * n * CONCEPT_BYTES)
    per_unit = n * UNIT_BYTES.get(metric, max(UNIT_BYTES.values()))  # a user metric: the most any metric needs
    room, store = max(left, unit_room), False
    if n_units * per_unit > room:
        store_bytes = (COMPACT_STORE_BYTES if compact_ranks else STORE_BYTES) * n * n_concepts
        store = metric in STORED_CONCEPT_FEATURES and n < 2**23 and store_bytes <= left - left // 4
        room = max(left - store_bytes if store else left, unit_room)
    block = min(n_units, max(1, room // per_unit))
    spare = max(0, room - block * per_unit)
    return ChunkPlan(block, chunk, work, 1 + spare // (block * n * POINT_BYTES), store, store and compact_ranks)


def check_setting(value: object) -> int | str:
    """A valid ``memory_budget``: ``"auto"``, ``"unbounded"`` or an integer ≥ :data:`MIN_BUDGET` bytes."""
    if isinstance(value, str) and value in BUDGET_SETTINGS:
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < MIN_BUDGET:
        raise ValueError(f"memory_budget must be 'auto', 'unbounded' or an integer number of bytes >= {MIN_BUDGET} "
                         f"(16 MiB), got {value!r}")
    return int(value)

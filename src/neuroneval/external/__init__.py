"""The paper profile: real datasets and checkpoints supplied by the user, turned into the project's tables.

The embedded default builds its own worlds and tiny models; the paper profile (``profiles/paper.yaml``, applied
with ``snakemake --configfile profiles/paper.yaml``) instead names local dataset folders and checkpoint files in
the ``external:`` block of the params, and the rules of ``workflow/rules/external.smk`` write the same
activation and concept tables (docs/design.md §2.1, same paths) that ``meta.smk`` reads. Nothing is downloaded.

``external:`` keys
------------------
``data_root``
    Folder that relative paths below are resolved against (absolute paths and ``~`` are kept as they are).
``device``
    ``auto`` (CUDA when available), ``cpu``, ``cuda`` or ``cuda:<index>``: where external models run.
``batch_size``, ``num_workers``
    Images per forward pass, and image-decoding worker processes (0 = decode in the job's own process).
``datasets``
    ``name → spec``; names may not start with ``vision_`` or ``text_`` (the embedded worlds' datasets). Kinds:

    ``image_folder`` (:mod:`neuroneval.external.image_datasets`)
        ``root`` (``root/<class>/<image>``, ImageNet val after the usual re-foldering), optional
        ``split_file`` (``<relative path> [<label>]`` per line, e.g. Places365's ``places365_val.txt``),
        ``class_names_file`` (one class per line: its id, then optionally a readable name, e.g. ImageNet's
        ``LOC_synset_mapping.txt`` or Places365's ``categories_places365.txt``), ``hierarchy_file``
        (superclasses, see :mod:`neuroneval.external.hierarchy`) and ``limit`` (keep this many images, spread
        evenly).
    ``cub``
        ``root`` (the ``CUB_200_2011`` folder), ``split`` (``train`` | ``test`` | ``all``, from
        ``train_test_split.txt``), ``attributes`` (``cbm``: the 112 concept-bottleneck attributes; ``all``),
        ``majority_vote`` (replace each image's attributes by its class's majority on the train split, as Koh
        et al. 2020 do), ``limit``.
    ``text`` (:mod:`neuroneval.external.text_datasets`)
        ``path`` (a ``.txt`` file = one document, a ``.jsonl`` file with a ``text`` field per line, or a folder
        of such files), ``tokenizer_model`` (an external ``transformers_lm`` model whose tokenizer cuts the
        text), ``max_tokens`` (the stream is cut after this many tokens).
``models``
    ``name → spec`` of :func:`neuroneval.models.loaders.load_model` (``family``: ``torchvision``, ``timm``,
    ``open_clip``, ``transformers_lm``; weights paths resolved against ``data_root``), plus
    ``concept_prefixes`` (vision models whose ``concepts`` layer is a bottleneck of sigmoid concept units,
    in the order of the dataset's concepts with these prefixes) and ``context_length`` (language models; default
    the model's ``n_positions``).
``probes``
    ``name → {features, train_dataset, concept_prefixes, holdout_fraction, training}``: a linear probe trained in
    the DAG on the ``open_clip`` model ``features``'s image embeddings of ``train_dataset``, one sigmoid unit per
    concept (paper 000 App. F, CUB setting 8).
``pseudo_labels``
    ``open_clip model name → {calibration, templates}``: concept tables ``pseudo:<model>`` with
    c_t = σ(a·(cos − b)) (:mod:`neuroneval.external.pseudo`).

Layers of a vision model in a setting's ``units``: ``softmax``/``logits`` (one unit per class of the dataset,
known concept = the class), ``superclass`` (sum of member-class probabilities per superclass of the dataset's
hierarchy), ``concepts`` (sigmoid of the outputs, one unit per bottleneck concept) or any module name
(``layer4``, ``blocks.11``), recorded with a forward hook and mean-pooled over space or tokens (no known concept;
use ``truth: {method: iou}``). Probes have the layer ``concepts``; language models ``next_token``.
"""

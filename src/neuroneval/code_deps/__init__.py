"""Which library code a workflow step runs, and a version of it that changes exactly when that code changes.

A rule runs one step function, and steps import what they need inside their bodies, so following imports file by
file would tie every rule to nearly the whole library. :meth:`~neuroneval.code_deps.index.CodeIndex.closure`
follows them definition by definition instead, with :mod:`ast` only (nothing is imported or run):

* a module's *top level* — every statement except the plain functions below: imports, constants, classes,
  decorated functions (a decorator may register them) — is reached whenever the module is imported, together
  with the top level of its parent packages (``import a.b.c`` runs ``a/__init__.py`` and ``a/b/__init__.py``);
* a plain top-level function (undecorated, not a dunder) is reached when reached code names it: ``f(...)``,
  ``from m import f``, ``m.f``, ``import a.m as m; m.f``. Imports inside its body count only when it is reached;
  imports under ``if TYPE_CHECKING:`` never run and do not count;
* functions looked up by a computed name are all reached: every function of a module that calls ``globals()``
  or ``vars()``, of a module read with ``getattr(module, name)``, and of the whole library for an
  ``importlib.import_module``/``__import__`` of a computed name.
* lazy names (PEP 562): a module that assigns a dict literal of strings ``LAZY_NAMES = {"name": "a.module"}``
  at its top level and defines ``__getattr__`` serves those names on first use. ``module.name`` or ``from module
  import name`` then reaches ``name`` of ``a.module`` (as a re-export would) and the ``__getattr__`` function;
  ``__getattr__`` is not top-level code, and its ``import_module(LAZY_NAMES[name])`` imports just that module.

``Closure.version`` hashes the abstract syntax tree (docstrings dropped unless the module reads ``__doc__``) of
each reached piece, so comments, formatting and docstrings never change it and any change to code a script can
run does. ``Closure.files`` is the set of files holding that code: what a DVC stage must depend on.

Every rule passes ``step=step_version("<step>")`` as a param (``StepVersions``, ``workflow/rules/common.smk``):
which step function of ``neuroneval.pipeline`` it runs, with the version of the code that step can run, so
Snakemake's params trigger reruns exactly the rules whose code changed; ``tests/workflow/test_code_deps.py``
checks dvc.yaml's code deps against ``dvc_code_deps``. ``python -m neuroneval.code_deps`` prints the code deps
each stage of dvc.yaml should have.

Three modules: :mod:`neuroneval.code_deps.index` (the AST index, :class:`~neuroneval.code_deps.index.CodeIndex`
and its closures), :mod:`neuroneval.code_deps.workflow` (rule files,
:class:`~neuroneval.code_deps.workflow.StepVersions`, :func:`~neuroneval.code_deps.workflow.dvc_code_deps`) and
:mod:`neuroneval.code_deps.cache` (the step versions of a library tree kept on disk, keyed by a digest of every
library file and the entry script, so a Snakefile parse of unchanged code computes no closure). The package's top
level imports nothing, so importing one module does not import the others.
"""

"""Mutation testing of the modules that decide results, with Cosmic Ray (docs/mutation_testing.md).

Each module is mutated alone and only the test files mapped to it in :data:`MODULE_TESTS` run against each mutant
(``pytest -x``, in the order mapped: the first failing test kills it), so a module costs (its mutants) × (its tests'
run time up to the first failure).
Mutants are applied to a scratch copy of the repository's files (``.mutants/tree``), never to the working tree,
so editing and testing here while a run goes on is safe. One Cosmic Ray session per module is kept in
``.mutants/<module>.sqlite``; ``tools/mutants_report.py`` turns the sessions into a markdown table.

    python tools/mutants.py                    # every module of MODULE_TESTS
    python tools/mutants.py --changed          # modules (or their mapped tests) changed since main's merge-base
    python tools/mutants.py src/neuroneval/metrics/binarize.py   # named modules only
    python tools/mutants.py --resume ...       # go on with the pending mutants of existing sessions
    python tools/mutants.py --recheck ...      # re-test only the survivors of existing sessions (after new tests)
    python tools/mutants.py --recheck-timeouts ...   # re-test the timed-out mutants once (a run under load)

Mutants inside annotations that Python never evaluates (the module has ``from __future__ import annotations``) are
marked skipped after ``cosmic-ray init`` and never run; the report counts them in their own column.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Sessions, the scratch tree and the run log live here (git-ignored).
WORK_DIR = ROOT / ".mutants"

#: Decisive module → the test files that cover it (the tests a mutant of that module must fail).
MODULE_TESTS: dict[str, tuple[str, ...]] = {
    # metric kernels and binarization
    "src/neuroneval/metrics/binarize.py": (
        "tests/metrics/test_binarize_rules.py",
        "tests/metrics/test_top_alpha_rules.py",
        "tests/metrics/test_sort_stability.py",
    ),
    "src/neuroneval/metrics/sparse_kernels.py": (
        "tests/metrics/test_sparse_labels.py",
    ),
    # the passes over the inputs: their own files check them against scipy, the engine's blocks and their budget
    "src/neuroneval/metrics/rank_products.py": ("tests/metrics/test_rank_products.py",),
    "src/neuroneval/metrics/input_products.py": ("tests/metrics/test_input_products.py",),
    # tests/sanity/test_setting_tables.py (280 s a run) only checks the column it writes: with it, 584 mutants
    # would take days; its survivors are rechecked against it by hand
    "src/neuroneval/sanity/decrease_odds.py": ("tests/sanity/test_decrease_odds.py",),
    "src/neuroneval/metrics/confusion.py": (
        "tests/metrics/test_label_concepts.py",
        "tests/metrics/test_oracles.py",
        "tests/metrics/test_common.py",
    ),
    "src/neuroneval/metrics/correlation.py": (
        "tests/metrics/test_correlation_rules.py",
        "tests/metrics/test_label_concepts.py",
        "tests/metrics/test_correlation_bounds.py",
        "tests/metrics/test_oracles.py",
        "tests/metrics/test_common.py",
    ),
    "src/neuroneval/metrics/wpmi_mad.py": (
        "tests/metrics/test_oracles.py",
        "tests/metrics/test_common.py",
        "tests/metrics/test_wpmi_mad_edges.py",
        "tests/metrics/test_label_concepts.py",
    ),
    "src/neuroneval/metrics/topandrandom.py": (
        "tests/metrics/test_topandrandom_rules.py",
        "tests/metrics/test_oracles.py",
        "tests/metrics/test_paper_scale_paths.py",
    ),
    # ranks and ties
    "src/neuroneval/metrics/ranks.py": (
        "tests/metrics/test_ranks_oracles.py",
        "tests/metrics/test_sort_stability.py",
        "tests/metrics/test_top_alpha_rules.py",
        "tests/metrics/test_reference_mode.py",
    ),
    # meta-AUPRC and its α/λ search
    "src/neuroneval/meta/auprc.py": (
        "tests/meta/test_auprc_rules.py",
        "tests/meta/test_table4_and_auprc.py",
        "tests/meta/test_interval_coverage.py",
    ),
    "src/neuroneval/meta/search.py": (
        "tests/meta/test_search_grid.py",
        "tests/meta/test_meta_defaults_and_ties.py",
        "tests/meta/test_table4_and_auprc.py",
    ),
    # sanity tests
    "src/neuroneval/sanity/theoretical.py": (
        "tests/sanity/test_theoretical_rules.py",
        "tests/sanity/test_theoretical.py",
        "tests/sanity/test_analytical.py",
        "tests/sanity/test_theoretical_reference.py",
    ),
    "src/neuroneval/sanity/analytical.py": (
        "tests/sanity/test_analytical_rules.py",
        "tests/sanity/test_analytical.py",
        "tests/sanity/test_theoretical_reference.py",
    ),
    "src/neuroneval/sanity/experimental.py": ("tests/sanity/test_experimental_rules.py",
                                              "tests/sanity/test_experimental.py"),
    "src/neuroneval/sanity/perturb.py": ("tests/sanity/test_perturb_rules.py", "tests/sanity/test_perturb.py",
                                         "tests/sanity/test_experimental.py"),
    "src/neuroneval/sanity/delta.py": ("tests/sanity/test_delta.py",),
    # crowd estimators, intervals and task pages
    "src/neuroneval/crowd/estimator.py": (
        "tests/crowd/test_sampling_estimator.py",
        "tests/crowd/test_estimator_edges.py",
    ),
    "src/neuroneval/crowd/sampling.py": ("tests/crowd/test_sampling_estimator.py",),
    "src/neuroneval/crowd/aggregation.py": ("tests/crowd/test_aggregation_raters.py",),
    "src/neuroneval/crowd/ingest.py": ("tests/crowd/test_ingest_rules.py", "tests/crowd/test_design_ingest.py",
                                       "tests/crowd/test_interval_coverage.py"),
    "src/neuroneval/crowd/gold.py": ("tests/crowd/test_gold_counts.py", "tests/crowd/test_real_study.py"),
    "src/neuroneval/crowd/task_pages.py": ("tests/crowd/test_task_pages.py", "tests/crowd/test_task_page_alignment.py"),
    # CoSy scoring, explanation simulation, fidelity verdicts
    "src/neuroneval/cosy/scoring.py": ("tests/cosy/test_scoring.py",),
    "src/neuroneval/explain/simulate.py": ("tests/explain/test_simulate.py", "tests/explain/test_evaluate.py"),
    **{f"src/neuroneval/fidelity/claims/{name}.py": ("tests/fidelity/test_claims.py",
                                                     "tests/fidelity/test_verdict_rules.py")
       for name in ("common", "paper_002")},
    "src/neuroneval/fidelity/claims/paper_001.py": ("tests/fidelity/test_paper001_claim_rules.py",
                                                    "tests/fidelity/test_claims.py",
                                                    "tests/fidelity/test_verdict_rules.py"),
    "src/neuroneval/fidelity/claims/paper_000_ranking.py": ("tests/fidelity/test_ranking_claim_rules.py",
                                                            "tests/fidelity/test_claims.py",
                                                            "tests/fidelity/test_verdict_rules.py"),
    "src/neuroneval/fidelity/claims/paper_004.py": ("tests/fidelity/test_paper004_claim_rules.py",
                                                    "tests/fidelity/test_claims.py",
                                                    "tests/fidelity/test_verdict_rules.py"),
    "src/neuroneval/fidelity/claims/paper_000_sanity.py": ("tests/fidelity/test_sanity_claim_rules.py",
                                                           "tests/fidelity/test_claims.py",
                                                           "tests/fidelity/test_verdict_rules.py"),
    "src/neuroneval/fidelity/claims/paired.py": ("tests/fidelity/test_paired.py",),
}


#: A mutant may run this many times longer than the unmutated tests before it counts as a timeout, and never less
#: than MIN_TIMEOUT_SECONDS: a niced run on a starved machine is slowed unevenly, and a timeout that is only the
#: load is no evidence of a kill (each is re-run once after its module's run: recheck(..., timeouts=True)).
TIMEOUT_FACTOR = 6.0
MIN_TIMEOUT_SECONDS = 300.0
#: The ``output`` of the result recorded for a mutant skipped because it lies inside an unevaluated annotation.
ANNOTATION_SKIP_REASON = "skipped: inside a type annotation, never evaluated (from __future__ import annotations)"

Position = tuple[int, int]


def module_slug(module: str) -> str:
    """``src/neuroneval/metrics/binarize.py`` → ``metrics.binarize`` (the session's file name)."""
    return ".".join(Path(module).relative_to("src/neuroneval").with_suffix("").parts)


def session_path(module: str) -> Path:
    return WORK_DIR / f"{module_slug(module)}.sqlite"


def changed_modules(base: str = "main") -> list[str]:
    """Mapped modules whose file or mapped tests differ from ``git merge-base HEAD base`` (committed or not)."""
    merge_base = subprocess.run(["git", "merge-base", "HEAD", base], cwd=ROOT, check=True, capture_output=True,
                                text=True).stdout.strip()
    diff = subprocess.run(["git", "diff", "--name-only", merge_base], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout.split()
    untracked = subprocess.run(["git", "ls-files", "--others", "--exclude-standard"], cwd=ROOT, check=True,
                               capture_output=True, text=True).stdout.split()
    changed = set(diff) | set(untracked)
    return [module for module, tests in MODULE_TESTS.items() if module in changed or changed.intersection(tests)]


def copy_tree(target: Path) -> None:
    """Fresh copy of the tracked and untracked-but-not-ignored files of the working tree into ``target``."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                            check=True, capture_output=True, text=True).stdout.split("\0")
    if target.exists():
        shutil.rmtree(target)
    for relative in filter(None, listed):
        source = ROOT / relative
        if source.is_file():
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / relative)


def mutant_timeout(baseline_seconds: float) -> float:
    """Seconds a mutant's tests may run: max(MIN_TIMEOUT_SECONDS, TIMEOUT_FACTOR × the unmutated run)."""
    return max(MIN_TIMEOUT_SECONDS, TIMEOUT_FACTOR * baseline_seconds)


def has_future_annotations(source: str) -> bool:
    """Whether the module's top level holds ``from __future__ import annotations`` (PEP 563: every annotation is
    kept as a string and never evaluated unless something asks for it)."""
    return any(isinstance(node, ast.ImportFrom) and node.module == "__future__"
               and any(alias.name == "annotations" for alias in node.names) for node in ast.parse(source).body)


def annotation_spans(source: str) -> list[tuple[Position, Position]]:
    """(start, end) of every annotation that nothing evaluates under ``from __future__ import annotations``, as
    (line from 1, column in characters from 0), the positions Cosmic Ray records for a mutation.

    Covered: the annotations of function arguments (positional-only, ordinary, ``*args``, keyword-only,
    ``**kwargs``; lambdas have none) and of function returns, and ``x: T`` / ``x: T = v`` annotations in function
    bodies and at module level. Not covered: annotations in a class body, which ``typing.get_type_hints`` reads
    (``Options.from_params`` does, for dataclass fields), and default values, which are evaluated.
    """
    lines = source.splitlines()

    def position(line: int, byte_column: int) -> Position:  # ast counts columns in UTF-8 bytes
        return line, len(lines[line - 1].encode()[:byte_column].decode())

    def span(node: ast.expr) -> tuple[Position, Position]:
        return position(node.lineno, node.col_offset), position(node.end_lineno, node.end_col_offset)

    def in_class_body(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
        return isinstance(parents.get(node), ast.ClassDef)

    tree = ast.parse(source)
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = node.args
            every = [*arguments.posonlyargs, *arguments.args, arguments.vararg, *arguments.kwonlyargs,
                     arguments.kwarg]
            spans += [span(argument.annotation) for argument in every if argument and argument.annotation]
            if node.returns is not None:
                spans.append(span(node.returns))
        elif isinstance(node, ast.AnnAssign) and not in_class_body(node, parents):
            spans.append(span(node.annotation))
    return sorted(spans)


def inside_annotation(start: Position, end: Position, spans: list[tuple[Position, Position]]) -> bool:
    """Whether the source range ``start``–``end`` lies wholly within one of ``spans``."""
    return any(low <= start and end <= high for low, high in spans)


def skip_annotation_mutants(session: Path, source: str) -> int:
    """Record every work item of ``session`` whose mutations all lie inside an unevaluated annotation as SKIPPED
    (with :data:`ANNOTATION_SKIP_REASON` as its output, as Cosmic Ray's own filters record a skip), so ``exec``
    never runs it; only for a module with ``from __future__ import annotations``. Returns how many."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    if not has_future_annotations(source):
        return 0
    spans = annotation_spans(source)
    skipped = 0
    with use_db(str(session), WorkDB.Mode.open) as database:
        for item in list(database.pending_work_items):
            if all(inside_annotation(tuple(m.start_pos), tuple(m.end_pos), spans) for m in item.mutations):
                database.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED,
                                                            output=ANNOTATION_SKIP_REASON))
                skipped += 1
    return skipped


def test_command(tests: tuple[str, ...]) -> list[str]:
    """``pytest -x`` over ``tests`` in the order given (pytest-randomly off): a module's quick test files come first
    in :data:`MODULE_TESTS`, so most mutants die before a slow file (a coverage simulation) starts. It runs through
    ``tools/niced_pytest.py``, which keeps a ``nice -n 19`` run niced in the new session Cosmic Ray starts for
    each test run (Linux autogroups apply nice values only inside a session)."""
    return [sys.executable, str(ROOT / "tools" / "niced_pytest.py"), "-x", "-q", "-p", "no:cacheprovider",
            "-p", "no:randomly", *tests]


def write_config(tree: Path, module: str, tests: tuple[str, ...], timeout: float) -> Path:
    """The Cosmic Ray session config of one module (local distributor, run inside the scratch tree)."""
    command = " ".join(test_command(tests))
    config = tree / f".cosmic-ray.{module_slug(module)}.toml"
    config.write_text(
        "[cosmic-ray]\n"
        f'module-path = "{module}"\n'
        f"timeout = {timeout:.1f}\n"
        "excluded-modules = []\n"
        f'test-command = "{command}"\n\n'
        "[cosmic-ray.distributor]\n"
        'name = "local"\n'
    )
    return config


def run_module(module: str, tree: Path, *, resume: bool, log) -> None:
    """Baseline the module's tests unmutated, then init (unless resuming) and execute its session."""
    tests = MODULE_TESTS[module]
    missing = [test for test in tests if not (tree / test).exists()]
    if missing:
        raise SystemExit(f"{module}: mapped test files missing: {missing} (edit MODULE_TESTS in tools/mutants.py)")
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    started = time.monotonic()
    baseline = subprocess.run(test_command(tests), cwd=tree, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if baseline.returncode != 0:
        raise SystemExit(f"{module}: its tests fail unmutated:\n{baseline.stdout[-3000:]}")
    # A mutant that loops forever counts as killed (timeout) once it timed out again when re-run.
    config = write_config(tree, module, tests, timeout=mutant_timeout(seconds))
    session = session_path(module)
    cosmic_ray = [sys.executable, "-m", "cosmic_ray.cli"]
    digest = hashlib.sha256((tree / module).read_bytes()).hexdigest()
    stamp = session.with_suffix(".sha256")
    if not (resume and session.exists() and stamp.exists() and stamp.read_text() == digest):
        subprocess.run([*cosmic_ray, "init", "--force", str(config), str(session)], cwd=tree, env=env, check=True)
        skipped = skip_annotation_mutants(session, (tree / module).read_text())
        log(f"{module}: {skipped} mutant(s) inside unevaluated annotations skipped")
        stamp.write_text(digest)
    log(f"{module}: baseline {seconds:.1f} s, tests {' '.join(tests)}")
    subprocess.run([*cosmic_ray, "exec", str(config), str(session)], cwd=tree, env=env, check=True)
    log(f"{module}: done after {time.monotonic() - started:.0f} s")
    recheck(module, tree, timeouts=True, log=log)


def recheck(module: str, tree: Path, *, timeouts: bool, log) -> None:
    """Run the survivors of ``module``'s session (or, with ``timeouts``, its timed-out mutants) again against its
    mapped tests as they are now, recording the new outcomes in the session: a survivor that a new test kills
    becomes killed; a timeout that finishes this time gets its real outcome. The timeout is set from a fresh
    unmutated run (:func:`mutant_timeout`). Uses the tree it is given, so with its own scratch tree it may run
    beside a session that is still executing."""
    from cosmic_ray.mutating import mutate_and_test
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome

    tests = MODULE_TESTS[module]
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    with use_db(str(session_path(module)), WorkDB.Mode.open) as database:
        if timeouts:
            chosen = [item for item, result in database.completed_work_items
                      if result.test_outcome == TestOutcome.KILLED and result.output == "timeout"]
        else:
            chosen = [item for item, result in database.completed_work_items
                      if result.test_outcome == TestOutcome.SURVIVED]
        what = "timed-out mutant(s)" if timeouts else "survivor(s)"
        if not chosen:
            log(f"{module}: no {what} to re-test")
            return
        started = time.monotonic()
        subprocess.run(test_command(tests), cwd=tree, env=env, capture_output=True, check=True)
        timeout = mutant_timeout(time.monotonic() - started)
        here, saved = Path.cwd(), os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = env["PYTHONPATH"]  # mutate_and_test's test run inherits this process's env
        os.chdir(tree)
        try:
            for item in chosen:
                database.set_result(item.job_id, mutate_and_test(item.mutations, " ".join(test_command(tests)),
                                                                 timeout))
        finally:
            os.chdir(here)
            if saved is None:
                os.environ.pop("PYTHONPATH")
            else:
                os.environ["PYTHONPATH"] = saved
    log(f"{module}: re-tested {len(chosen)} {what} with {' '.join(tests)} (timeout {timeout:.0f} s)")


def smallest_first(modules) -> list[str]:
    """Module paths ordered by file size, smallest first, so that a run cut short has finished many modules."""
    return sorted(modules, key=lambda module: ((ROOT / module).stat().st_size, module))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="module paths (default: every module of MODULE_TESTS)")
    parser.add_argument("--changed", action="store_true", help="only modules changed since main's merge-base")
    parser.add_argument("--base", default="main", help="branch whose merge-base --changed compares with")
    parser.add_argument("--resume", action="store_true", help="keep existing sessions of unchanged modules")
    parser.add_argument("--recheck", action="store_true", help="re-test only the survivors of existing sessions")
    parser.add_argument("--recheck-timeouts", action="store_true",
                        help="re-test only the timed-out mutants of existing sessions, once")
    args = parser.parse_args(argv)
    unknown = [module for module in args.modules if module not in MODULE_TESTS]
    if unknown:
        parser.error(f"not in MODULE_TESTS of tools/mutants.py: {unknown}")
    modules = args.modules or (changed_modules(args.base) if args.changed else smallest_first(MODULE_TESTS))
    if not modules:
        print("no mapped module changed; nothing to mutate")
        return 0
    WORK_DIR.mkdir(exist_ok=True)
    rechecking = args.recheck or args.recheck_timeouts
    tree = WORK_DIR / ("recheck" if rechecking else "tree")
    with open(WORK_DIR / "run.log", "a") as log_file:
        def log(line: str) -> None:
            print(line, flush=True)
            log_file.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {line}\n")
            log_file.flush()

        for module in modules:
            copy_tree(tree)  # per module: tests added while a long run goes on count for the modules still to come
            if rechecking:
                recheck(module, tree, timeouts=args.recheck_timeouts, log=log)
            else:
                run_module(module, tree, resume=args.resume, log=log)
    return 0


if __name__ == "__main__":
    sys.exit(main())

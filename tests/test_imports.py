"""Imports point one way: no import cycle among the modules of reviewapp/ and judges/, counting
imports inside functions (a lazy import still ties the two modules together) and imports only type
checkers read (under `if TYPE_CHECKING:`: a reader still needs one module to understand the other);
judges/ never imports Django or reviewapp, and its checks and profiles never import a backend; no
service imports the tasks module (tasks call services; services send tasks through
reviewapp/enqueue.py, by name). Read from the source (the AST), nothing is imported."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("reviewapp", "judges")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(path): path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts
    }


MODULES = _modules()


def _statements(tree: ast.AST):
    """Every node of the tree, those under `if TYPE_CHECKING:` included."""
    for node in ast.iter_child_nodes(tree):
        yield node
        yield from _statements(node)


def _imported(module: str, path: Path) -> set[str]:
    """Every module `module` names in an import statement anywhere in its file (in functions too),
    resolved to the project's modules where it is one (`from a import b` is module a.b if there is
    one)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in _statements(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found.add(base)
            found.update(
                f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES
            )
    return found


def _graph() -> dict[str, set[str]]:
    """Module -> the project's modules it imports. A module importing its own package's __init__
    (what `from . import x` also does) is not an edge: Python runs the __init__ first anyway."""
    graph = {}
    for module, path in MODULES.items():
        targets = set()
        for name in _imported(module, path):
            while (
                name and name not in MODULES
            ):  # `import reviewapp.api.ingest.x` -> the module it is in
                name = name.rpartition(".")[0]
            if name and name != module and not module.startswith(f"{name}."):
                targets.add(name)
        graph[module] = targets
    return graph


def _a_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle (a list of modules, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1 on the path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return [*path[path.index(target):], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_an_import_only_for_type_checkers_is_an_edge_too(tmp_path):
    source = tmp_path / "reader.py"
    source.write_text("from typing import TYPE_CHECKING\n\n"
                      "if TYPE_CHECKING:\n    from judges.checks.answer import Answer\n")
    assert "judges.checks.answer" in _imported("judges.checks.reader", source)


def test_the_check_fails_on_a_cycle_of_type_only_imports(tmp_path):
    """checks/answer imported checks/quotes, which imported checks/answer for its types only."""
    (tmp_path / "answer.py").write_text("from judges.checks.quotes import quotations\n")
    (tmp_path / "quotes.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                        "    from judges.checks.answer import Answer\n")
    graph = {"judges.checks.answer": _imported("judges.checks.answer", tmp_path / "answer.py"),
             "judges.checks.quotes": _imported("judges.checks.quotes", tmp_path / "quotes.py")}
    graph = {module: targets & set(graph) for module, targets in graph.items()}
    assert _a_cycle(graph) == [
        "judges.checks.answer",
        "judges.checks.quotes",
        "judges.checks.answer",
    ]


def test_the_check_sees_the_modules_and_their_lazy_imports():
    graph = _graph()
    assert {"reviewapp.judging.tasks", "reviewapp.api.ingest", "judges.engine"} <= set(graph)
    assert "reviewapp.judging.service" in graph["reviewapp.judging.tasks"]
    # An import inside a function counts: reviewapp/celery.py reads the liveness service only in its
    # signal handlers.
    assert "reviewapp.judging.liveness" in graph["reviewapp.celery"]


def test_the_check_finds_a_cycle_through_a_lazy_import():
    assert _a_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _a_cycle({"a": {"b"}, "b": set()}) is None


def test_no_module_of_reviewapp_or_judges_takes_part_in_an_import_cycle():
    cycle = _a_cycle(_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("judges")))
def test_the_judge_library_never_imports_django_or_reviewapp(module):
    roots = {name.split(".")[0] for name in _imported(module, MODULES[module])}
    assert not roots & {
        "django",
        "reviewapp",
    }, f"{module} imports {sorted(roots & {'django', 'reviewapp'})}"


# The checks and the profiles run on every backend's result, so they never reach into one: what a
# backend shares with them (the aligner) lives beside them in judges/.
BACKEND_FREE = ("judges.checks", "judges.profiles")


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith(BACKEND_FREE)))
def test_the_checks_and_the_profiles_never_import_a_backend(module):
    backends = {name for name in _imported(module, MODULES[module])
                if name == "judges.backends" or name.startswith("judges.backends.")}
    assert (
        not backends
    ), f"{module} imports {sorted(backends)}: move what both need out of the backend"


TASK_MODULES = {m for m in MODULES if m.endswith(".tasks")}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("reviewapp.")
                                          and m not in TASK_MODULES | {"reviewapp.apps"}))
def test_only_the_worker_side_imports_a_tasks_module(module):
    """Tasks import services; services send tasks through reviewapp/enqueue.py, by name."""
    assert not _imported(module, MODULES[module]) & TASK_MODULES


# What reviewapp may import from judges (docs/architecture.md, "reviewapp and judges"): the entry
# point and the contract, and the few modules whose one definition both sides share.
JUDGES_FOR_REVIEWAPP = {
    "judges",  # the entry point: judge, identify, JudgeConfig, JudgeError, request and result
    "judges.types",  # the result contract, labels and how bad each is
    "judges.eval",  # the figures, shared with `python -m judges eval`
    "judges.profiles",  # the profiles and versions a form offers
    "judges.examples",  # worked examples a policy attaches to a config
    "judges.scoring",  # the verdict of human labels, as of the judge's
    "judges.safe",  # the safe answer the API returns
    "judges.ratelimit",  # the fleet-wide limits the worker waits on and /metrics counts
    "judges.text", "judges.passages",  # an example's excerpt, cut as the judge reads passages
}
# The worker imports the backends when it starts, not inside its first task (reviewapp/celery.py).
WARM_UP = {
    "judges.backends",
    "judges.backends.openai_chat",
    "judges.checks",
    "judges.backends.offline.judge",
}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("reviewapp")))
def test_reviewapp_imports_judges_only_through_its_public_modules(module):
    allowed = JUDGES_FOR_REVIEWAPP | (WARM_UP if module == "reviewapp.celery" else set())
    used = {name for name in _imported(module, MODULES[module]) if name.split(".")[0] == "judges"}
    assert (
        used <= allowed
    ), f"{module} imports {sorted(used - allowed)}: add it to judges' entry point"

"""The project's import boundaries, by static analysis of its own source (and two subprocesses).

    cycles   no import cycle among the project's modules, through module-level imports nor through
             imports inside functions or under ``if TYPE_CHECKING:`` (a lazy import defers the cost of a
             module, not the knot: a file cycle, lazy or for type hints only, is two modules that each need
             the other); a "package.module:function" string (the role table's entry points, the labellers'
             loops) is such a lazy import too, and so is a lazy export: a module with a ``__getattr__`` (PEP
             562, drlhp/__init__.py's) imports the dotted module names its strings give
    envs     envs/ imports nothing of drlhp, pref_interface or floyd, anywhere in a file
    layers   every import, anywhere in a file (entry-point strings too), runs down the house or stays in its
             own unit; none runs back up, none goes sideways to another unit of the same layer:

                 7  floyd                                        the run archive, over run directories
                 6  drlhp.run (cli, pipeline, roles, ...), run   the parent: the modes, the role table
                 5  drlhp.policy | pref_interface                two roles, neither imports the other
                 4  drlhp.reward                                 the predictor's role; its model, database
                                                                 and checkpoint serve the other two
                 3  drlhp.config (its presets,                   what a run is: its typed config, and the
                    its labeller_names)                          labellers' names its flag offers
                 2  drlhp.processes                              the plumbing: channels, ports, messages,
                                                                 the backends, a process's set-up; no config
                 1  drlhp.records (and drlhp's __init__)         the run's files: paths, record, file format,
                                                                 metrics; no process, no config
                 0  envs                                         knows nothing of learning

             so drlhp/ and pref_interface/ import nothing of floyd (a run's curves are drawn by
             drlhp.records.curves); pref_interface/ nothing of drlhp.policy (it sees segments, not the
             policy: their wire codec is drlhp.processes.segment_wire); the config nothing of a role
    backends no role (drlhp.reward, drlhp.policy, pref_interface) imports a backend (drlhp.processes.launcher,
             ray_backend, ray_channels): a role gets its channels as ports, and runs the same on either
    algorithms  the policy's algorithms are folders that never import each other (drlhp.policy.a2c, drlhp.policy.ppo:
             what both use is drlhp.policy's, beside them), and the (algorithm, action kind) choice is made in one
             table, drlhp.policy.algorithms: no other module imports an algorithm's folder (the table names their
             pieces), nor compares a config's --algo (``cfg.algo``) to an algorithm's name
    parent   the run archive's listing loads no TensorFlow; the parent process's modules and run.py's
             argument parsing load neither TensorFlow nor Qt

Each check is also run on a small made-up tree (or snippet) that breaks it, so a check that could
never fail would show here.
"""
from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("drlhp", "envs", "pref_interface", "floyd")
SCRIPTS = ("run.py",)
HEAVY = ("tensorflow", "keras", "PyQt5")
ENTRY_STRING = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):([A-Za-z_]\w*)")


# ---- reading the source --------------------------------------------------------------------------

def project_modules(root: Path = REPO) -> dict[str, Path]:
    """{dotted module name: file} for every .py file under the packages, and the top-level scripts."""
    modules = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    for script in SCRIPTS:
        if (root / script).is_file():
            modules[Path(script).stem] = root / script
    return modules


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _module_level_nodes(tree: ast.Module, in_functions: bool = False):
    """Every node run when the module is imported: not inside a function or lambda (unless
    ``in_functions``: every node that may ever run), nor under ``if TYPE_CHECKING:`` (never run).
    Class bodies run at import, so they count."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and not in_functions:
            continue
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _imported_names(node: ast.AST, module: str, is_package: bool,
                    strings: bool = False) -> list[tuple[str, list[str]]]:
    """(module, [names]) of an import statement: ``import a.b`` -> ("a.b", []); ``from a import b, c``
    -> ("a", ["b", "c"]); relative imports resolved against ``module``. With ``strings``, an entry-point
    string is an import too: "a.b:f" -> ("a.b", ["f"]) (the role and labeller tables name their loops so,
    imported later by importlib: a lazy import all the same)."""
    if isinstance(node, ast.Import):
        return [(alias.name, []) for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            package = module.split(".") if is_package else module.split(".")[:-1]
            package = package[: len(package) - (node.level - 1)]
            base = ".".join([*package, *([base] if base else [])])
        return [(base, [alias.name for alias in node.names])]
    if strings and isinstance(node, ast.Constant) and isinstance(node.value, str):
        entry = ENTRY_STRING.fullmatch(node.value)  # "pkg.module:function", imported when it is called
        if entry:
            return [(entry.group(1), [entry.group(2)])]
    if (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in ("import_module", "__import__"):  # importlib.import_module("x.y"), __import__("x")
            return [(node.args[0].value, [])]
    return []


DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


def lazy_exports(tree: ast.Module) -> list[str]:
    """The dotted module names in the strings of a module that has a module-level ``__getattr__`` (PEP 562: a
    lazy export, ``{"LearnedReward": "drlhp.learned_reward"}`` imported on first use); [] in any other module."""
    if not any(isinstance(node, ast.FunctionDef) and node.name == "__getattr__" for node in tree.body):
        return []
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and DOTTED.fullmatch(node.value)]


def imports(path: Path, module: str, module_level_only: bool, type_checking: bool = True,
            lazy_export: bool = False) -> list[str]:
    """The modules ``path`` imports (each ``from a import b`` gives "a" and "a.b": b may be a module):
    at module level only, or anywhere (``type_checking``: those under ``if TYPE_CHECKING:`` too; and
    anywhere, the "module:function" strings of entry-point tables, which importlib imports later; with
    ``lazy_export``, the modules a ``__getattr__`` exports, ``lazy_exports``)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    if module_level_only or not type_checking:
        nodes = _module_level_nodes(tree, in_functions=not module_level_only)
    else:
        nodes = ast.walk(tree)
    out = []
    for node in nodes:
        for base, names in _imported_names(node, module, path.name == "__init__.py", strings=not module_level_only):
            out.append(base)
            out.extend(f"{base}.{name}" for name in names if name != "*")
    if lazy_export and not module_level_only:
        out.extend(lazy_exports(tree))
    return out


def import_graph(modules: dict[str, Path], module_level_only: bool = True,
                 lazy_export: bool = True) -> dict[str, set[str]]:
    """{module: the project modules it imports at module level (or anywhere in it: inside functions, under
    ``if TYPE_CHECKING:``, an entry-point string, and with ``lazy_export`` a ``__getattr__``'s modules)}.
    The implicit import of a module's own parent packages is not an edge (every submodule has it; a package
    importing its submodules is normal); an explicit ``from pkg import name`` or ``import pkg`` is."""
    return {module: {m for m in imports(path, module, module_level_only, type_checking=not module_level_only,
                                        lazy_export=lazy_export)
                     if m in modules and m != module}
            for module, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (a list of modules, the first repeated at the end) per strongly connected component
    with more than one module (Tarjan)."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(set(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_one_cycle(graph, component) for component in components]


def _one_cycle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest cycle through the component's first module (breadth first, inside the component)."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & component):
                if w == start:
                    return [*paths[v], start]
                if w not in paths:
                    paths[w] = [*paths[v], w]
                    nxt.append(w)
        frontier = nxt
    return sorted(component)  # unreachable for a strongly connected component


def _under(module: str, packages: tuple[str, ...]) -> bool:
    """Whether ``module`` is one of ``packages`` (dotted names) or inside one."""
    return any(module == p or module.startswith(p + ".") for p in packages)


# The layers, bottom to top (the module docstring): each a tuple of units, each unit its modules' prefixes
# ("=drlhp": that module alone). A module imports its own unit and lower layers only.
LAYERS = (
    ("envs",),
    ("drlhp.records =drlhp",),
    ("drlhp.processes",),
    ("drlhp.config",),
    ("drlhp.reward",),
    ("drlhp.policy", "pref_interface"),
    ("drlhp.run run",
     "drlhp.learned_reward"),
    ("floyd",),
)
ROLES = ("drlhp.reward", "drlhp.policy", "pref_interface")
ALGORITHM_FOLDERS = ("drlhp.policy.a2c", "drlhp.policy.ppo")
ALGORITHM_TABLE = "drlhp.policy.algorithms"
BACKENDS = ("drlhp.processes.launcher", "drlhp.processes.ray_backend", "drlhp.processes.ray_channels")


def place(module: str, layers=LAYERS) -> tuple[int, str] | None:
    """(layer, unit) of ``module``: the unit with its longest prefix; None where no unit holds it."""
    best = None
    for level, units in enumerate(layers):
        for unit in units:
            for prefix in unit.split():
                exact = prefix.startswith("=")
                prefix = prefix.lstrip("=")
                if (module == prefix or (not exact and module.startswith(prefix + "."))) and (
                        best is None or len(prefix) > best[0]):
                    best = (len(prefix), level, unit)
    return None if best is None else best[1:]


def arrows_up(graph: dict[str, set[str]], layers=LAYERS) -> list[str]:
    """'a -> b (layer i -> j)' for each import that runs up the layers or sideways into another unit of
    the same layer; 'a: no layer' for a module that no unit holds."""
    bad = []
    for module in sorted(graph):
        here = place(module, layers)
        if here is None:
            bad.append(f"{module}: no layer")
            continue
        for imported in sorted(graph[module]):
            there = place(imported, layers)
            if there is not None and (there[0] > here[0] or (there[0] == here[0] and there[1] != here[1])):
                bad.append(f"{module} -> {imported} (layer {here[0]} -> {there[0]})")
    return bad


def forbidden_imports(modules: dict[str, Path], package: str, forbidden: tuple[str, ...],
                      root: Path = REPO) -> list[str]:
    """'file: module' for each import, anywhere in ``package``'s files (a top-level package or a dotted
    subpackage: "drlhp.reward"), of a module under ``forbidden`` (the same: "drlhp.policy")."""
    bad = set()
    for module, path in modules.items():
        if _under(module, (package,)):
            bad.update(f"{path.relative_to(root)}: {imported}"
                       for imported in imports(path, module, module_level_only=False)
                       if _under(imported, forbidden))
    return sorted(bad)


def algorithm_crossings(modules: dict[str, Path], folders=ALGORITHM_FOLDERS, root: Path = REPO) -> list[str]:
    """'file: module' for each import, anywhere in one algorithm's folder, of another algorithm's."""
    return [line for folder in folders
            for line in forbidden_imports(modules, folder, tuple(f for f in folders if f != folder), root)]


def algorithm_choices(modules: dict[str, Path], folders=ALGORITHM_FOLDERS, table: str = ALGORITHM_TABLE,
                      root: Path = REPO) -> list[str]:
    """'file: ...' for each place outside the table (``table``) and the algorithms' own folders that picks an
    algorithm: an import of an algorithm's folder (a "module:name" string too), or a comparison of an ``algo``
    attribute (a config's --algo: ``cfg.algo == "ppo"``, ``cfg.algo in (...)``) with a string."""
    bad = []
    for module, path in modules.items():
        if module == table or _under(module, folders):
            continue
        name = path.relative_to(root)
        bad += sorted({f"{name}: imports {m}" for m in imports(path, module, module_level_only=False)
                       if _under(m, folders)})
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            reads_algo = any(isinstance(x, ast.Attribute) and x.attr == "algo" for x in sides)
            names = [x for x in sides if isinstance(x, ast.Constant) and isinstance(x.value, str)]
            names += [e for x in sides if isinstance(x, (ast.Tuple, ast.List, ast.Set)) for e in x.elts
                      if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if reads_algo and names:
                bad.append(f"{name}:{node.lineno}: compares --algo with {names[0].value!r}")
    return bad


def heavy_modules_after(code: str, cwd: Path = REPO, heavy: tuple[str, ...] = HEAVY) -> list[str]:
    """The top-level packages of ``heavy`` in sys.modules after running ``code`` in a fresh interpreter."""
    probe = textwrap.dedent(code) + textwrap.dedent(f"""
        import json as _json, sys as _sys
        print("HEAVY=" + _json.dumps(sorted({{m.split(".")[0] for m in _sys.modules}} & {set(heavy)!r})))
        """)
    proc = subprocess.run([sys.executable, "-c", probe], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"the probe failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("HEAVY=")][-1]
    return json.loads(line[len("HEAVY="):])


# ---- the project -----------------------------------------------------------------------------------

def test_the_project_has_its_modules():
    modules = project_modules()
    assert {"drlhp.run.pipeline", "drlhp.policy.process", "drlhp.run.cli", "envs", "envs.atari", "envs.score_blanking",
            "pref_interface.process", "floyd.__main__", "run"} <= set(modules)


def test_no_import_cycles_at_module_level():
    found = cycles(import_graph(project_modules()))
    assert not found, "module-level import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_no_import_cycles_through_imports_inside_functions_either():
    found = cycles(import_graph(project_modules(), module_level_only=False))
    assert not found, "import cycles (some imports inside functions):\n" + "\n".join(" -> ".join(c) for c in found)


def test_envs_imports_nothing_of_the_learning_side():
    bad = forbidden_imports(project_modules(), "envs", ("drlhp", "pref_interface", "floyd"))
    assert not bad, "envs/ imports learning code:\n" + "\n".join(bad)


def test_drlhp_and_pref_interface_import_nothing_of_floyd():
    bad = [line for package in ("drlhp", "pref_interface")
           for line in forbidden_imports(project_modules(), package, ("floyd",))]
    assert not bad, "an import up the layers, of the run archive:\n" + "\n".join(bad)


def test_pref_interface_imports_nothing_of_the_policy():
    bad = forbidden_imports(project_modules(), "pref_interface", ("drlhp.policy",))
    assert not bad, "pref_interface/ imports the policy's code:\n" + "\n".join(bad)


def test_the_every_import_graph_reads_the_package_face_and_type_checking_imports():
    graph = import_graph(project_modules(), module_level_only=False)
    assert "drlhp.learned_reward" in graph["drlhp"]  # drlhp/__init__.py's lazy export (_LAZY, __getattr__)
    assert "drlhp.learned_reward" not in import_graph(project_modules())["drlhp"]  # not run at import


def test_no_import_runs_back_up_the_layers():
    # the package's face (drlhp/__init__, layer 1: every submodule's import runs it) exports the learned-reward
    # wrapper lazily, on a caller's first use of the name: an import from outside the house, not up its layers
    bad = arrows_up(import_graph(project_modules(), module_level_only=False, lazy_export=False))
    assert not bad, "imports up the layers (or sideways):\n" + "\n".join(bad)


def test_no_role_imports_a_backend():
    bad = [line for role in ROLES for line in forbidden_imports(project_modules(), role, BACKENDS)]
    assert not bad, "a role imports a backend:\n" + "\n".join(bad)


def test_no_algorithm_imports_another():
    bad = algorithm_crossings(project_modules())
    assert not bad, "an algorithm's folder imports another's (shared pieces belong in drlhp.policy):\n" + "\n".join(bad)


def test_the_algorithm_is_chosen_in_one_table():
    bad = algorithm_choices(project_modules())
    assert not bad, f"an algorithm picked outside {ALGORITHM_TABLE}:\n" + "\n".join(bad)


def test_listing_runs_loads_no_tensorflow(tmp_path):
    run = tmp_path / "runs" / "MovingDot-v0-train_policy_with_original_rewards-20260101-000000"
    run.mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({"mode": "train_policy_with_original_rewards",
                                                 "env": "MovingDot-v0", "seed": 0}))
    (run / "status.json").write_text(json.dumps({"status": "finished"}))
    (run / "summary.json").write_text(json.dumps({"true_return_last100": 1.5}))
    code = f"""
        import runpy, sys
        sys.argv = ["floyd", "list", "--runs_dir", {str(tmp_path / "runs")!r}]
        try:
            runpy.run_module("floyd", run_name="__main__", alter_sys=True)
        except SystemExit as e:
            assert not e.code, f"python -m floyd list exited {{e.code}}"
        """
    assert "tensorflow" not in heavy_modules_after(code, heavy=("tensorflow", "keras"))


def test_the_parent_process_modules_load_neither_tensorflow_nor_qt():
    code = """
        import drlhp.config, drlhp.processes.launcher, drlhp.run.pipeline
        import run  # run.py
        from drlhp.config.cli import build_parser, config_from_args
        cfg = config_from_args(build_parser().parse_args(["--env", "MovingDot-v0", "--synthetic_prefs"]))
        assert cfg.env == "MovingDot-v0"
        """
    assert heavy_modules_after(code) == []


# ---- each check can fail ---------------------------------------------------------------------------

def _tree(root: Path, files: dict[str, str]) -> dict[str, Path]:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return project_modules(root)


def test_a_module_level_cycle_is_found_and_a_lazy_one_only_among_every_import(tmp_path):
    modules = _tree(tmp_path, {
        "drlhp/__init__.py": "",
        "drlhp/a.py": "from drlhp.b import x\n",
        "drlhp/b.py": "import drlhp.c\nx = 1\n",
        "drlhp/c.py": "from drlhp import a\n",  # a -> b -> c -> a
        "drlhp/d.py": "def f():\n    from drlhp.e import y\n",  # d <-> e, but d's import is lazy
        "drlhp/e.py": "from drlhp.d import f\ny = 1\n",
        "envs/__init__.py": "from envs.vec import V\n",  # a package importing its submodule: no cycle
        "envs/vec.py": "class V:\n    pass\n",
        "envs/atari.py": "if True:\n    from .blank import b\n",  # relative, under an if: counted
        "envs/blank.py": "class B:\n    from envs.atari import b\nb = 1\n",  # a class body runs at import
        "run.py": "from drlhp.run.cli import main\n",
        "floyd/__init__.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import floyd.x\n",
        "floyd/x.py": "import floyd\n",
    })
    found = cycles(import_graph(modules))
    assert sorted(found) == [["drlhp.a", "drlhp.b", "drlhp.c", "drlhp.a"], ["envs.atari", "envs.blank", "envs.atari"]]
    # counting every import, the lazy one closes its cycle too, and so does TYPE_CHECKING's (never run, but the
    # two modules still need each other)
    found = cycles(import_graph(modules, module_level_only=False))
    assert sorted(found) == [["drlhp.a", "drlhp.b", "drlhp.c", "drlhp.a"], ["drlhp.d", "drlhp.e", "drlhp.d"],
                             ["envs.atari", "envs.blank", "envs.atari"], ["floyd", "floyd.x", "floyd"]]


def test_a_type_checking_import_closes_a_cycle_among_every_import(tmp_path):
    modules = _tree(tmp_path, {  # the shape of ppo.py <-> ppo_rollout.py before issue 41
        "drlhp/__init__.py": "",
        "drlhp/policy/__init__.py": "",
        "drlhp/policy/ppo.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                "    from drlhp.policy.ppo_rollout import PPORollout\nclass PPOPolicy:\n    pass\n"),
        "drlhp/policy/ppo_rollout.py": "from drlhp.policy.ppo import PPOPolicy\nclass PPORollout:\n    pass\n",
    })
    assert cycles(import_graph(modules)) == []
    assert cycles(import_graph(modules, module_level_only=False)) == [
        ["drlhp.policy.ppo", "drlhp.policy.ppo_rollout", "drlhp.policy.ppo"]]


def test_a_lazy_export_closes_a_cycle_and_a_string_elsewhere_does_not(tmp_path):
    modules = _tree(tmp_path, {
        "drlhp/__init__.py": (  # drlhp/__init__.py's shape: names -> modules, imported by __getattr__
            '_LAZY = {"Wrapper": "drlhp.wrapper", "Other": "drlhp.other"}\n'
            "def __getattr__(name):\n    import importlib\n"
            "    return getattr(importlib.import_module(_LAZY[name]), name)\n"),
        "drlhp/wrapper.py": "import drlhp\nclass Wrapper:\n    pass\n",  # drlhp -> wrapper -> drlhp
        "drlhp/other.py": "class Other:\n    pass\n",
        "drlhp/notes.py": '"""see drlhp.wrapper"""\nimport drlhp\nN = "drlhp.other"\n',  # no __getattr__: no import
    })
    assert cycles(import_graph(modules)) == []  # nothing of it runs at import
    assert cycles(import_graph(modules, module_level_only=False)) == [["drlhp", "drlhp.wrapper", "drlhp"]]
    graph = import_graph(modules, module_level_only=False)
    assert graph["drlhp"] == {"drlhp.wrapper", "drlhp.other"} and graph["drlhp.notes"] == {"drlhp"}
    assert import_graph(modules, module_level_only=False, lazy_export=False)["drlhp"] == set()


def test_an_entry_point_string_is_a_lazy_import_and_closes_a_cycle(tmp_path):
    modules = _tree(tmp_path, {
        "drlhp/__init__.py": "",
        "drlhp/config/__init__.py": "from pref_interface.table import T\n",  # config -> table -> window -> config
        "drlhp/run/roles.py": '"""Not a table: drlhp.config:RunConfig in a sentence is no import."""\n',
        "pref_interface/__init__.py": "",
        "pref_interface/table.py": 'T = {"window": "pref_interface.window:label", "x": "http://a:b", "y": "a:b:c"}\n',
        "pref_interface/window.py": "def label():\n    from drlhp import config\n",  # closes the cycle
    })
    assert cycles(import_graph(modules)) == []  # a string is imported only when its loop is called
    assert cycles(import_graph(modules, module_level_only=False)) == [
        ["drlhp.config", "pref_interface.table", "pref_interface.window", "drlhp.config"]]
    assert imports(modules["pref_interface.table"], "pref_interface.table", module_level_only=False) == [
        "pref_interface.window", "pref_interface.window.label"]
    assert imports(modules["drlhp.run.roles"], "drlhp.run.roles", module_level_only=False) == []


def test_an_envs_import_of_drlhp_is_found_even_inside_a_function(tmp_path):
    modules = _tree(tmp_path, {
        "envs/__init__.py": "import numpy\n",
        "envs/ok.py": "from envs import vec\n",
        "envs/lazy.py": "def f():\n    from drlhp.config import RunConfig\n",
        "envs/sub/__init__.py": "import importlib\nM = importlib.import_module('floyd.index')\n",
        "drlhp/__init__.py": "import envs\n",
    })
    bad = forbidden_imports(modules, "envs", ("drlhp", "pref_interface", "floyd"), root=tmp_path)
    assert bad == ["envs/lazy.py: drlhp.config", "envs/lazy.py: drlhp.config.RunConfig",
                   "envs/sub/__init__.py: floyd.index"]


def test_an_import_of_a_forbidden_subpackage_is_found_and_its_neighbours_are_not(tmp_path):
    modules = _tree(tmp_path, {
        "pref_interface/__init__.py": "",
        "pref_interface/a.py": "def f():\n    from drlhp.policy.segments import SegmentCutter\n",
        "pref_interface/b.py": "import drlhp.policy\n",
        "pref_interface/c.py": "from drlhp.processes import segment_wire\nimport drlhp.policyish\n",
        "pref_interface/d.py": "from drlhp import policy\n",
    })
    bad = forbidden_imports(modules, "pref_interface", ("drlhp.policy",), root=tmp_path)
    assert bad == ["pref_interface/a.py: drlhp.policy.segments",
                   "pref_interface/a.py: drlhp.policy.segments.SegmentCutter",
                   "pref_interface/b.py: drlhp.policy", "pref_interface/d.py: drlhp.policy"]


def test_an_import_up_the_layers_or_sideways_is_found(tmp_path):
    modules = _tree(tmp_path, {
        "drlhp/__init__.py": "",
        "drlhp/processes/__init__.py": "",
        "drlhp/processes/ports.py": "import drlhp\nimport envs\n",  # down, and the package's __init__
        "drlhp/processes/launcher.py": "from drlhp.records.run_record import RunRecord\n",  # down: run files
        "drlhp/processes/interrupts.py": "",
        "drlhp/records/run_record.py": "",
        "drlhp/records/atomic.py": "def f():\n    from drlhp.processes import interrupts\n",  # up
        "drlhp/config/__init__.py": "from drlhp.processes import ports\nT = 'pref_interface.human:loop'\n",  # str: up
        "drlhp/reward/model.py": "from drlhp.config import X\n",
        "drlhp/policy/source.py": "def f():\n    from drlhp.reward.model import M\n",  # down
        "drlhp/policy/leak.py": "def f():\n    import pref_interface.pool\n",  # sideways
        "pref_interface/__init__.py": "",
        "pref_interface/human.py": "import drlhp.run.pipeline\n",  # up
        "pref_interface/pool.py": "from pref_interface import human\n",  # its own unit
        "drlhp/run/pipeline.py": "from drlhp.run import roles\nimport floyd.index\n",  # its own unit; up
        "drlhp/run/roles.py": "R = 'pref_interface.process:run'\n",  # down
        "drlhp/stray.py": "",
        "envs/__init__.py": "",
        "floyd/__init__.py": "",
        "floyd/index.py": "import drlhp.run.pipeline\n",
    })
    assert arrows_up(import_graph(modules, module_level_only=False)) == [
        "drlhp.config -> pref_interface.human (layer 3 -> 5)",
        "drlhp.policy.leak -> pref_interface.pool (layer 5 -> 5)",
        "drlhp.records.atomic -> drlhp.processes (layer 1 -> 2)",
        "drlhp.records.atomic -> drlhp.processes.interrupts (layer 1 -> 2)",
        "drlhp.run.pipeline -> floyd.index (layer 6 -> 7)",
        "drlhp.stray: no layer",
        "pref_interface.human -> drlhp.run.pipeline (layer 5 -> 6)"]
    assert place("drlhp") == (1, "drlhp.records =drlhp") and place("drlhp.recordsx") is None


def test_a_role_importing_a_backend_is_found(tmp_path):
    modules = _tree(tmp_path, {
        "drlhp/__init__.py": "",
        "drlhp/reward/process.py": "def close():\n    from drlhp.processes.launcher import parent_gone\n",
        "drlhp/run/pipeline.py": "from drlhp.processes import launcher, ray_backend\n",  # the parent may
        "drlhp/policy/process.py": "from drlhp.processes.ports import PolicyPorts\n",
        "pref_interface/process.py": "import drlhp.processes.ray_channels\n",
    })
    bad = [line for role in ROLES for line in forbidden_imports(modules, role, BACKENDS, root=tmp_path)]
    assert bad == ["drlhp/reward/process.py: drlhp.processes.launcher",
                   "drlhp/reward/process.py: drlhp.processes.launcher.parent_gone",
                   "pref_interface/process.py: drlhp.processes.ray_channels"]


def test_an_algorithm_importing_another_is_found(tmp_path):
    modules = _tree(tmp_path, {  # the shape of discrete PPO on A2C's network and rollout before issue 60
        "drlhp/policy/nets.py": "",
        "drlhp/policy/a2c/update.py": "from drlhp.policy.nets import policy_network\n",  # a shared piece: fine
        "drlhp/policy/a2c/rollout.py": "def f():\n    from drlhp.policy.ppo import batches\n",  # lazy, still an import
        "drlhp/policy/ppo/discrete.py": "from drlhp.policy.a2c.network import policy_network\n",
        "drlhp/policy/ppo/batches.py": "from drlhp.policy.nets import policy_network\n",
    })
    assert algorithm_crossings(modules, root=tmp_path) == [
        "drlhp/policy/a2c/rollout.py: drlhp.policy.ppo", "drlhp/policy/a2c/rollout.py: drlhp.policy.ppo.batches",
        "drlhp/policy/ppo/discrete.py: drlhp.policy.a2c.network",
        "drlhp/policy/ppo/discrete.py: drlhp.policy.a2c.network.policy_network"]


def test_an_algorithm_chosen_outside_the_table_is_found(tmp_path):
    modules = _tree(tmp_path, {
        "drlhp/policy/algorithms.py": ('T = {("ppo", "box"): "drlhp.policy.ppo.trainer:PPOTrainer"}\n'
                                       'def pick(cfg):\n    return T["a2c" if cfg.algo == "auto" else cfg.algo]\n'),
        "drlhp/policy/ppo/trainer.py": "from drlhp.policy.a2c import update\nALGO = 'ppo'\n",  # its own folder
        # the shape of drlhp/run/modes.py before issue 60: the choice written out where a mode needs it
        "drlhp/run/modes.py": ("def train(cfg, kind):\n    if cfg.algo == 'ppo' and kind == 'box':\n"
                               "        from drlhp.policy.ppo.trainer import PPOTrainer\n"),
        "drlhp/policy/process.py": ("def run(cfg, row, meta):\n"  # the row's kind, a checkpoint's algo: fine
                                    "    if row.actions == 'box' or meta['algo'] != row.algo:\n"
                                    "        return 'drlhp.policy.algorithms:pick'\n"),
        "drlhp/run/checks.py": "def f(cfg):\n    return cfg.algo in ('a2c', 'ppo') or cfg.algo is None\n",
        "drlhp/config/presets.py": "def g(algo):\n    return algo == 'ppo'\n",  # a name, not a config's --algo
    })
    assert algorithm_choices(modules, root=tmp_path) == [
        "drlhp/run/checks.py:2: compares --algo with 'a2c'",
        "drlhp/run/modes.py: imports drlhp.policy.ppo.trainer",
        "drlhp/run/modes.py: imports drlhp.policy.ppo.trainer.PPOTrainer",
        "drlhp/run/modes.py:2: compares --algo with 'ppo'"]


def test_the_probe_sees_a_module_that_was_imported():
    assert heavy_modules_after("import wave\n", heavy=("wave", "csv")) == ["wave"]
    assert heavy_modules_after("x = 1\n", heavy=("wave", "csv")) == []



def test_the_local_backend_loads_no_ray():
    """Ray is imported only with --backend ray (drlhp.processes.ray_backend, inside run_processes)."""
    code = """
        import drlhp.run.cli, drlhp.config, drlhp.processes.launcher, drlhp.run.pipeline, drlhp.processes.queues
        import floyd.seeds
        import run  # run.py
        from drlhp.config.cli import build_parser, config_from_args
        cfg = config_from_args(build_parser().parse_args(["--env", "MovingDot-v0", "--synthetic_prefs"]))
        assert cfg.backend == "local"
        """
    assert heavy_modules_after(code, heavy=("ray",)) == []
    assert heavy_modules_after("import drlhp.processes.ray_channels", heavy=("ray",)) == ["ray"]  # the probe sees it


# ---- size: a module holds one thing ----------------------------------------------------------------------------

MAX_LINES = 400  # issue 32: no file in drlhp/ or pref_interface/ over 400 lines


def long_files(root: Path = REPO, packages=("drlhp", "pref_interface"), limit: int = MAX_LINES) -> list[str]:
    return [f"{p.relative_to(root)}: {n} lines" for package in packages for p in sorted((root / package).rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > limit]


def test_no_module_of_the_roles_or_the_parent_is_over_400_lines(tmp_path):
    assert long_files() == []
    (tmp_path / "drlhp").mkdir()
    (tmp_path / "drlhp" / "big.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "drlhp" / "small.py").write_text("x = 1\n" * MAX_LINES)
    assert long_files(tmp_path, packages=("drlhp",)) == ["drlhp/big.py: 401 lines"]


def test_the_suite_imports_nothing_from_bench():
    """bench/ holds benchmarks only; what a test needs lives under tests/ (tests/support)."""
    found = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{path.name}: {n}" for n in names if n == "bench" or n.startswith("bench.")]
    assert found == []

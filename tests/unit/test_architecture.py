"""The house's rules, as a newcomer relies on them (docs/layout.md): a top
level read in one glance; the packages import one way (floors, STYLE.md 10)
and no two folders import each other; modules and functions short enough to
read in one sitting; and each module's tests at its mirrored path."""

import ast
import fnmatch
import os
import re

from tests.conftest import REPO
from tests.tested_elsewhere import TESTED_ELSEWHERE


def read(name: str) -> str:
  with open(os.path.join(REPO, name), encoding="utf-8") as f:
    return f.read()


def packaged() -> set:
  text = read("pyproject.toml")
  listed = re.search(r"^packages = \[(.*?)\]", text, re.M | re.S).group(1)
  return {p.strip().strip('"').split(".")[0] for p in listed.split(",") if p.strip()}


def project_packages(root: str = REPO) -> set:
  return {d for d in os.listdir(root)
          if os.path.isfile(os.path.join(root, d, "__init__.py")) and d not in ("tests", "bench")}


def imported_by(package: str) -> set:
  """The project's top-level packages that `package`'s modules import."""
  return {top for top, _ in imports_of(package)}


# The calls that import a module named by a string: the floors hold for them
# too (a literal only; a name built at run time is the caller's own affair).
DYNAMIC_IMPORTS = {("importlib", "import_module"), (None, "import_module"), (None, "__import__")}


def imported_modules(tree: ast.AST) -> set:
  """Every absolute module a parsed file imports: `import`, `from ... import`,
  and `importlib.import_module("x.y")` or `__import__("x")` with a literal."""
  found = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      found |= {a.name for a in node.names}
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
      found.add(node.module)
    elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
          and isinstance(node.args[0].value, str)):
      func = node.func
      called = ((func.value.id if isinstance(func.value, ast.Name) else "", func.attr)
                if isinstance(func, ast.Attribute) else
                (None, func.id) if isinstance(func, ast.Name) else ("", ""))
      if called in DYNAMIC_IMPORTS:
        found.add(node.args[0].value)
  return found


def imports_of(package: str, root: str = REPO) -> set:
  """(imported project package, importing file) for `package`'s modules."""
  found = set()
  for folder, _, files in os.walk(os.path.join(root, package)):
    for name in files:
      if name.endswith(".py"):
        where = os.path.join(os.path.relpath(folder, root), name)
        with open(os.path.join(root, where), encoding="utf-8") as f:
          tree = ast.parse(f.read())
        found |= {(module.split(".")[0], where) for module in imported_modules(tree)}
  ours = project_packages(root) | {"bench"}
  return {(top, where) for top, where in found if top in ours and top != package}


# Floors, lowest first (STYLE.md 10): a package imports only from its own floor
# or below, so data flows one way and no two folders import each other.
FLOORS = [{"runtime"}, {"dataset", "serving"}, {"trainer", "components"}, {"store"},
          {"pipeline"}, {"commands", "kubeflow", "bench"}]


def upward_imports(root: str = REPO) -> list:
  """`<file> imports <package> (...)` for each import that runs up a floor."""
  floor = {p: i for i, packages in enumerate(FLOORS) for p in packages}
  assert set(floor) >= project_packages(root), project_packages(root) - set(floor)
  return sorted(f"{where} imports {top} ({FLOORS[floor[top]]} is above "
                f"{FLOORS[floor[package]]})"
                for package in floor if os.path.isdir(os.path.join(root, package))
                for top, where in imports_of(package, root) if floor[top] > floor[package])


def test_no_import_runs_up_a_floor():
  upward = upward_imports()
  assert not upward, "\n".join(upward)


def test_no_two_folders_import_each_other():
  graph = {p: imported_by(p) for p in project_packages() | {"bench"}}
  pairs = sorted((a, b) for a in graph for b in graph[a] if a < b and a in graph.get(b, ()))
  assert not pairs, pairs


# 250 lines a module; "about 50" a function, where a little over is a
# judgment call and well over is a function doing two things.
MODULE_LINES, FUNCTION_LINES = 250, 60


def test_modules_and_functions_stay_short():
  long = []
  for package in sorted(project_packages() | {"bench"}) + ["local_runner.py"]:
    path = os.path.join(REPO, package)
    files = ([os.path.join(folder, n) for folder, _, names in os.walk(path)
              for n in names if n.endswith(".py")] if os.path.isdir(path) else [path])
    for name in files:
      text = open(name, encoding="utf-8").read()
      where = os.path.relpath(name, REPO)
      if text.count("\n") > MODULE_LINES:
        long.append(f"{where}: {text.count(chr(10))} lines (expected <= {MODULE_LINES})")
      for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
          lines = node.end_lineno - node.lineno + 1
          if lines > FUNCTION_LINES:
            long.append(f"{where}:{node.lineno} {node.name}: {lines} lines "
                        f"(expected <= {FUNCTION_LINES})")
  assert not long, "\n".join(long)


# kubeflow/ by where its code runs (STYLE.md, Kubeflow's own backend/src/v2):
# what the image runs imports no compile or API code (a step never needs
# kfp's client or TFX's compiler), and compiling talks to no API server;
# doctor (on the user's machine, over the others) is imported by none.
KUBEFLOW_ROOMS = {"steps": {"compile", "api", "doctor"}, "compile": {"api", "doctor"},
                  "api": {"compile", "doctor"}}


def test_kubeflow_code_imports_only_what_runs_where_it_runs():
  crossed = []
  for room, forbidden in KUBEFLOW_ROOMS.items():
    folder = os.path.join(REPO, "kubeflow", room)
    for name in sorted(os.listdir(folder)):
      if not name.endswith(".py"):
        continue
      modules = imported_modules(ast.parse(read(os.path.join("kubeflow", room, name))))
      crossed += [f"kubeflow/{room}/{name} imports {m}" for m in sorted(modules)
                  if m.split(".")[:2] in (["kubeflow", f] for f in forbidden)]
  assert not crossed, "\n".join(crossed)
  assert os.path.isdir(os.path.join(REPO, "kubeflow", "steps")), "kubeflow/steps is gone"


# At most about twelve folders a newcomer reads in one glance (docs/layout.md).
TOP_LEVEL_FOLDERS = 12


def _ignored(name: str) -> bool:
  patterns = [line.strip().rstrip("/") for line in read(".gitignore").splitlines()
              if line.strip() and not line.startswith("#")]
  return name.startswith(".") or any(fnmatch.fnmatch(name, p) for p in patterns)


def test_the_top_level_is_read_in_one_glance():
  folders = sorted(d for d in os.listdir(REPO)
                   if os.path.isdir(os.path.join(REPO, d)) and not _ignored(d))
  assert len(folders) <= TOP_LEVEL_FOLDERS, (
      f"expected at most {TOP_LEVEL_FOLDERS} top-level folders, found {len(folders)}: {folders}")
  listed = re.findall(r"^(\w+)/ ", read("docs/layout.md"), re.M)
  assert sorted(listed) == folders, f"docs/layout.md lists {sorted(listed)}, the tree has {folders}"


# Mirrored, by cost: fast ones; ones that run TensorFlow, TFT or TFMA for
# real in pytest's process (a model trained, a Beam pipeline); ones that
# start processes.
TESTS = ("tests/unit", "tests/integration", "tests/processes")
CROSS_CUTTING = {"tests/unit/test_architecture.py", "tests/unit/test_docs.py",
                 "tests/unit/test_docker_image.py", "tests/processes/test_lint.py",
                 "tests/processes/test_tiers.py"}


def _modules(root: str = REPO):
  """(module file, its mirrored stem) for every module with code."""
  for package in sorted(project_packages(root) | {"bench"}):
    for folder, dirs, files in os.walk(os.path.join(root, package)):
      dirs[:] = sorted(d for d in dirs if d != "__pycache__")
      for name in sorted(files):
        where = os.path.relpath(os.path.join(folder, name), root)
        if not name.endswith(".py") or name == "__main__.py":
          continue
        if name == "__init__.py":
          with open(os.path.join(root, where), encoding="utf-8") as f:
            body = ast.parse(f.read()).body
          if not any(isinstance(n, (ast.FunctionDef, ast.ClassDef)) for n in body):
            continue  # a docstring and names: nothing of its own to test
          yield where, os.path.dirname(where)
        else:
          yield where, where[:-3]
  if os.path.isfile(os.path.join(root, "local_runner.py")):
    yield "local_runner.py", "local_runner"


def _test_files(root: str = REPO):
  for base in TESTS:
    for folder, dirs, files in os.walk(os.path.join(root, base)):
      dirs[:] = [d for d in dirs if d != "__pycache__"]
      yield from (os.path.relpath(os.path.join(folder, n), root)
                  for n in files if n.startswith("test_") and n.endswith(".py"))


def _mirrors(test: str, stem: str) -> bool:
  """`tests/unit/a/test_b.py` (or `test_b_<aspect>.py`) mirrors `a/b`."""
  base = next(b for b in TESTS if test.startswith(b + "/"))
  folder, name = os.path.split(os.path.relpath(test, base))
  module_folder, module = os.path.split(stem)
  return folder == module_folder and (name == f"test_{module}.py"
                                      or name.startswith(f"test_{module}_"))


def _tests_using(text: str, stem: str) -> list:
  """The test functions in a test file's text that use the module at `stem`
  (`a/b/c`): they name what the file imports of it (`import a.b.c`, `from
  a.b import c`, `from a.b.c import d`, inside a function too) or of its
  package's entry point (`a.b.main`, `a.b.cli`), or a helper or fixture of
  the file that does; or they name it in a string (`python -m a.b`, a
  monkeypatch target, a child process's `from a.b import c`)."""
  dotted = stem.replace("/", ".")
  package, _, name = dotted.rpartition(".")
  entries = {dotted} | ({f"{package}.main", f"{package}.cli"} if package else set())
  said = re.compile(rf"\b{re.escape(dotted)}\b|\b{re.escape(stem)}\.py\b"
                    + (rf"|from {re.escape(package)} import [\w, ]*\b{name}\b"
                       rf"|-m {re.escape(package)}\b|^{re.escape(package)}$" if package else ""))
  tree = ast.parse(text)
  bound = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      bound |= {(a.asname or a.name).split(".")[0] for a in node.names
                if any((a.name + ".").startswith(e + ".") for e in entries)}
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
      bound |= {a.asname or a.name for a in node.names
                if any((node.module + ".").startswith(e + ".")
                       or f"{node.module}.{a.name}" == e for e in entries)}
  functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]

  def named(function) -> set:
    found = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)}
    found |= {a.arg for a in function.args.args}  # fixtures
    if any(isinstance(n, ast.Constant) and isinstance(n.value, str) and said.search(n.value)
           for n in ast.walk(function)):
      found.add("<the module>")
    return found
  users, names = bound | {"<the module>"}, {f.name: named(f) for f in functions}
  # Module-level strings (a child process's script) count for whoever names them.
  for node in tree.body:
    if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str) and said.search(node.value.value)):
      users |= {t.id for t in node.targets if isinstance(t, ast.Name)}
  while True:
    more = {f for f, found in names.items() if f not in users and found & users}
    if not more:
      return sorted(f for f in users if f.startswith("test_") and f in names)
    users |= more


# Mirrored test files that reach their module only through another: the
# rule above cannot see it, so each says how.
THROUGH = {
    "tests/processes/commands/debug/test_cli.py":
        "runs `python -m commands.debug` with tests/runs.py's debug_cli",
    "tests/processes/dataset/records/test_format.py":
        "reads back the records the `written` fixture (tests/conftest.py) wrote with it",
    "tests/processes/runtime/test_beam.py":
        "runs a statistics Executor's Beam pipeline, set up by runtime/beam.py",
    "tests/processes/trainer/jobs/test_kube.py":
        "runs the TrainJob launcher (trainer.jobs.trainjob), which reads its pod with it",
    "tests/processes/trainer/test_checkpoints.py":
        "starts training workers (tests/training.py) that checkpoint through it",
    "tests/processes/trainer/test_distribute.py":
        "starts training workers (tests/training.py) that make their strategy with it",
    "tests/integration/dataset/test_fields.py":
        "declares optional features through dataset.declaration, which reads them with it",
    "tests/unit/kubeflow/doctor/test_predictor.py": "runs `commands.kubeflow doctor` "
        "(tests/doctor_install.py doctor), whose serving.py runs it",
    "tests/unit/kubeflow/doctor/test_profile.py": "runs `commands.kubeflow doctor` "
        "(tests/doctor_install.py doctor), whose checks.py runs it",
    "tests/unit/kubeflow/doctor/test_serving.py": "runs `commands.kubeflow doctor` "
        "(tests/doctor_install.py doctor), whose checks.py runs it",
    "tests/unit/kubeflow/doctor/test_store.py": "runs `commands.kubeflow doctor` "
        "(tests/doctor_install.py doctor), whose checks.py runs it",
    "tests/unit/kubeflow/compile/test_compiler_vertex.py":
        "compiles through `python -m commands.kubeflow compile --backend vertex`",
    "tests/integration/components/import_examples/test_import_examples.py":
        "runs its Executor through tests/unit/components/import_examples/"
        "test_import_examples.py's run_executor",
    "tests/integration/trainer/test_loop.py": "trains through trainer.run.train, which runs its loops",
}


def untested_modules(root: str = REPO, tested_elsewhere=(), through=()) -> dict:
  """What breaks the mirrored-path rule: {"missing": modules without a
  mirrored test file or a reason, "both": modules with both, "empty": test
  files that hold no test of the module they mirror}."""
  tests = list(_test_files(root))
  modules = dict(_modules(root))
  mirrored = {where: [t for t in tests if _mirrors(t, stem)] for where, stem in modules.items()}
  empty = []
  for test in tests:
    stems = [stem for stem in modules.values() if _mirrors(test, stem)]
    with open(os.path.join(root, test), encoding="utf-8") as f:
      text = f.read()
    if stems and test not in through and not any(_tests_using(text, stem) for stem in stems):
      empty.append(test)
  return {"missing": [w for w, found in mirrored.items()
                      if w not in tested_elsewhere and not found],
          "both": sorted(w for w, found in mirrored.items() if w in tested_elsewhere and found),
          "empty": sorted(empty)}


def test_every_module_has_its_tests_at_its_mirrored_path_or_says_where():
  found = untested_modules(REPO, TESTED_ELSEWHERE, THROUGH)
  assert not found["missing"], (
      "expected tests at tests/unit/<path>/test_<module>.py (or under tests/integration/ "
      "or tests/processes/), "
      f"or a reason in tests/tested_elsewhere.py; found neither for: {found['missing']}")
  stale = sorted(set(TESTED_ELSEWHERE) - {where for where, _ in _modules()})
  assert not stale, f"tests/tested_elsewhere.py names modules that are gone: {stale}"
  assert not found["both"], (
      f"tests/tested_elsewhere.py lists modules with their own tests: {found['both']}")
  assert not found["empty"], ("expected each mirrored test file to hold a test that "
                              f"imports or runs its module, found none in: {found['empty']}")
  gone = sorted(t for t in THROUGH if not os.path.isfile(os.path.join(REPO, t)))
  assert not gone, f"THROUGH names test files that are gone: {gone}"


def test_every_test_file_mirrors_a_module():
  stems = [stem for _, stem in _modules()]
  strays = sorted(t for t in _test_files() if t not in CROSS_CUTTING
                  and not any(_mirrors(t, stem) for stem in stems))
  assert not strays, ("expected each file under tests/unit/, tests/integration/ and "
                      "tests/processes/ at the mirrored path"
                      f" of a module (test_<module>[_<aspect>].py), found: {strays}")


STANDINS, FAKES = "tests/standins", "tests/fakes"  # the stand-ins' own tests, and the stand-ins


def test_every_standin_test_names_the_standin_it_proves():
  """tests/standins/test_<fake>[_<aspect>].py proves tests/fakes/<fake>.py
  answers as upstream does: run by the suite, but not the product's test."""
  fakes = [n[:-3] for n in os.listdir(os.path.join(REPO, FAKES)) if n.endswith(".py")]
  found = sorted(n for n in os.listdir(os.path.join(REPO, STANDINS))
                 if n.startswith("test_") and n.endswith(".py"))
  strays = [n for n in found if not any(n == f"test_{f}.py" or n.startswith(f"test_{f}_")
                                        for f in fakes)]
  assert found and not strays, (f"expected each file in {STANDINS}/ named after a stand-in "
                                f"in {FAKES}/ (test_<fake>[_<aspect>].py), found: {strays}")
  marked = [n for n in found if "mark.e2e" in read(os.path.join(STANDINS, n))]
  assert not marked, f"expected the stand-ins' tests outside the e2e mark, found it in {marked}"


def _covering_tests(reason: str) -> list:
  return re.findall(r"(tests/[\w/]+\.py)::(\w+)", reason)


def test_every_module_tested_elsewhere_names_a_test_that_exists():
  unnamed, gone = [], []
  for module, reason in TESTED_ELSEWHERE.items():
    named = _covering_tests(reason)
    if not named:
      unnamed.append(module)
    for path, test in named:
      text = read(path) if os.path.isfile(os.path.join(REPO, path)) else ""
      if not any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == test
                 for n in ast.walk(ast.parse(text))):
        gone.append(f"{module}: {path}::{test}")
  assert not unnamed, ("expected each reason in tests/tested_elsewhere.py to name a test "
                       f"that covers its module (tests/<file>.py::test_<name>): {unnamed}")
  assert not gone, f"tests/tested_elsewhere.py names tests that do not exist: {gone}"


def _tree(root, files: dict) -> str:
  for name, text in files.items():
    os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
    with open(os.path.join(root, name), "w", encoding="utf-8") as f:
      f.write(text)
  return str(root)


def test_the_rules_catch_a_dynamic_upward_import_and_an_empty_mirrored_file(tmp_path):
  """The checkers above, on a tree of their own: each break they exist for."""
  root = _tree(tmp_path, {
      "runtime/__init__.py": "",
      "runtime/loader.py": 'import importlib\n\ndef config():\n'
                           '  return importlib.import_module("pipeline.config")\n',
      "runtime/old.py": 'def config():\n  return __import__("pipeline")\n',
      "runtime/fine.py": 'import importlib\nX = importlib.import_module("runtime.old")\n',
      "pipeline/__init__.py": "",
      "pipeline/config.py": "from runtime import fine\n",
      "tests/unit/runtime/test_loader.py": '"""Nothing yet."""\n',
      "tests/unit/runtime/test_old.py": "def test_it():\n  assert True\n",
      "tests/unit/runtime/test_fine.py": "from runtime import fine\n\n\ndef helper():\n"
                                         "  return fine.X\n\n\ndef test_x():\n"
                                         "  assert helper()\n",
      "tests/unit/pipeline/test_config.py": 'def test_runs(run):\n  run("pipeline.config")\n',
  })
  assert upward_imports(root) == [
      f"runtime/loader.py imports pipeline ({FLOORS[4]} is above {FLOORS[0]})",
      f"runtime/old.py imports pipeline ({FLOORS[4]} is above {FLOORS[0]})"]
  found = untested_modules(root, {"runtime/fine.py": "tests/x.py::test_y"})
  assert found == {"missing": [], "both": ["runtime/fine.py"],
                   "empty": ["tests/unit/runtime/test_loader.py",
                             "tests/unit/runtime/test_old.py"]}
  assert _covering_tests("with tests/e2e/test_e2e.py::test_the_run, and unit/x.py") == [
      ("tests/e2e/test_e2e.py", "test_the_run")]

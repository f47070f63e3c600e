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


def project_packages() -> set:
  return {d for d in os.listdir(REPO)
          if os.path.isfile(os.path.join(REPO, d, "__init__.py")) and d not in ("tests", "bench")}


def imported_by(package: str) -> set:
  """The project's top-level packages that `package`'s modules import."""
  return {top for top, _ in imports_of(package)}


def imports_of(package: str) -> set:
  """(imported project package, importing file) for `package`'s modules."""
  found = set()
  for folder, _, files in os.walk(os.path.join(REPO, package)):
    for name in files:
      if name.endswith(".py"):
        tree = ast.parse(read(os.path.join(os.path.relpath(folder, REPO), name)))
        where = os.path.join(os.path.relpath(folder, REPO), name)
        for node in ast.walk(tree):
          if isinstance(node, ast.Import):
            found |= {(a.name.split(".")[0], where) for a in node.names}
          elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add((node.module.split(".")[0], where))
  ours = project_packages() | {"bench"}
  return {(top, where) for top, where in found if top in ours and top != package}


# Floors, lowest first (STYLE.md 10): a package imports only from its own floor
# or below, so data flows one way and no two folders import each other.
FLOORS = [{"runtime"}, {"dataset", "serving"}, {"trainer", "components"}, {"store"},
          {"pipeline"}, {"commands", "kubeflow", "bench"}]


def test_no_import_runs_up_a_floor():
  floor = {p: i for i, packages in enumerate(FLOORS) for p in packages}
  assert set(floor) >= project_packages(), project_packages() - set(floor)
  upward = sorted(f"{where} imports {top} ({FLOORS[floor[top]]} is above "
                  f"{FLOORS[floor[package]]})"
                  for package in floor for top, where in imports_of(package)
                  if floor[top] > floor[package])
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
# kfp's client or TFX's compiler), and compiling talks to no API server.
KUBEFLOW_ROOMS = {"steps": {"compile", "api"}, "compile": {"api"}, "api": {"compile"}}


def test_kubeflow_code_imports_only_what_runs_where_it_runs():
  crossed = []
  for room, forbidden in KUBEFLOW_ROOMS.items():
    folder = os.path.join(REPO, "kubeflow", room)
    for name in sorted(os.listdir(folder)):
      if not name.endswith(".py"):
        continue
      for node in ast.walk(ast.parse(read(os.path.join("kubeflow", room, name)))):
        modules = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                   [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
        crossed += [f"kubeflow/{room}/{name} imports {m}" for m in modules
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


TESTS = ("tests/unit", "tests/processes")  # mirrored: fast ones, and ones that start processes
CROSS_CUTTING = {"tests/unit/test_architecture.py", "tests/unit/test_docs.py",
                 "tests/unit/test_docker_image.py", "tests/processes/test_lint.py"}


def _modules():
  """(module file, its mirrored stem) for every module with code."""
  for package in sorted(project_packages() | {"bench"}):
    for folder, dirs, files in os.walk(os.path.join(REPO, package)):
      dirs[:] = sorted(d for d in dirs if d != "__pycache__")
      for name in sorted(files):
        where = os.path.relpath(os.path.join(folder, name), REPO)
        if not name.endswith(".py") or name == "__main__.py":
          continue
        if name == "__init__.py":
          body = ast.parse(read(where)).body
          if not any(isinstance(n, (ast.FunctionDef, ast.ClassDef)) for n in body):
            continue  # a docstring and names: nothing of its own to test
          yield where, os.path.dirname(where)
        else:
          yield where, where[:-3]
  yield "local_runner.py", "local_runner"


def _test_files():
  for base in TESTS:
    for folder, dirs, files in os.walk(os.path.join(REPO, base)):
      dirs[:] = [d for d in dirs if d != "__pycache__"]
      yield from (os.path.relpath(os.path.join(folder, n), REPO)
                  for n in files if n.startswith("test_") and n.endswith(".py"))


def _mirrors(test: str, stem: str) -> bool:
  """`tests/unit/a/test_b.py` (or `test_b_<aspect>.py`) mirrors `a/b`."""
  base = next(b for b in TESTS if test.startswith(b + "/"))
  folder, name = os.path.split(os.path.relpath(test, base))
  module_folder, module = os.path.split(stem)
  return folder == module_folder and (name == f"test_{module}.py"
                                      or name.startswith(f"test_{module}_"))


def test_every_module_has_its_tests_at_its_mirrored_path_or_says_where():
  tests = list(_test_files())
  modules = dict(_modules())
  missing = [where for where, stem in modules.items()
             if where not in TESTED_ELSEWHERE and not any(_mirrors(t, stem) for t in tests)]
  assert not missing, ("expected tests at tests/unit/<path>/test_<module>.py (or under "
                       "tests/processes/), or a reason in tests/tested_elsewhere.py; "
                       f"found neither for: {missing}")
  stale = sorted(set(TESTED_ELSEWHERE) - set(modules))
  assert not stale, f"tests/tested_elsewhere.py names modules that are gone: {stale}"
  both = sorted(where for where, stem in modules.items() if where in TESTED_ELSEWHERE
                and any(_mirrors(t, stem) for t in tests))
  assert not both, f"tests/tested_elsewhere.py lists modules with their own tests: {both}"


def test_every_test_file_mirrors_a_module():
  stems = [stem for _, stem in _modules()]
  strays = sorted(t for t in _test_files() if t not in CROSS_CUTTING
                  and not any(_mirrors(t, stem) for stem in stems))
  assert not strays, ("expected each file under tests/unit/ and tests/processes/ at the "
                      f"mirrored path of a module (test_<module>[_<aspect>].py), found: {strays}")

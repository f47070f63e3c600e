"""The house's rules, as a newcomer relies on them: the packages import one
way (floors, STYLE.md 10), no two folders import each other, and modules and
functions stay short enough to read in one sitting."""

import ast
import os
import re

from tests.conftest import REPO


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
FLOORS = [{"startup"}, {"storage", "records", "serving"}, {"convert"}, {"dataset", "launcher"},
          {"trainer", "components", "tuner", "metadata"},
          {"pipeline"}, {"report"}, {"runner"},
          {"cli", "kubeflow", "bench", "debug", "retention"}]


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
KUBEFLOW_ROOMS = {"steps": {"compile", "api"}, "compile": {"api"}}


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

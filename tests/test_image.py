"""What the Kubeflow image holds agrees with what the steps need, and the
packages import one way.

No image is built here (no Docker); these hold its recipe against the code:
- the packages: pyproject.toml's, the Dockerfile's COPY lines, and the
  project packages the installed code imports are the same set, since a
  step starts in an empty working directory where only installed packages
  import (tests/test_kubeflow_steps.py runs them that way);
- the GPU variant's CUDA libraries: the pins TensorFlow publishes for its
  own build, so a bump of either cannot drift apart unnoticed;
- a Trainer given a GPU that TensorFlow cannot use stops, naming what did
  not load (run here on the CPU, which has none).
And the code stays readable: short modules and functions.
"""

import ast
import importlib.metadata
import os
import re

import pytest
import tensorflow as tf

from tests.conftest import REPO
from trainer import distribute


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


def test_pyproject_the_dockerfile_and_the_imports_agree_on_the_packages():
  copied = set(re.findall(r"^COPY (\w+) \1$", read("kubeflow/Dockerfile"), re.M))
  data_folders = {"datasets", "schemas"}
  assert packaged() == project_packages(), (packaged(), project_packages())
  assert copied - data_folders == packaged(), (copied, packaged())
  for package in packaged():
    missing = imported_by(package) - packaged()
    assert not missing, f"{package}/ imports {missing}, which the image does not install"


# Floors, lowest first (STYLE.md 10): a package imports only from its own floor
# or below, so data flows one way and no two folders import each other.
FLOORS = [{"startup"}, {"storage", "records", "serving"}, {"convert"}, {"dataset"},
          {"trainer", "components", "tuner", "metadata"},
          {"pipeline"}, {"report"}, {"cli", "kubeflow", "bench", "debug"}]


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


# "About 250 lines" and "about 50": a little over is a judgment call, well
# over is a module or a function doing two things.
MODULE_LINES, FUNCTION_LINES = 300, 60


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


def and_cuda_pins() -> dict:
  pins = {}
  for requirement in importlib.metadata.requires("tensorflow"):
    match = re.match(r"([\w-]+) ?==([\w.]+) ?; extra == .and-cuda.", requirement)
    if match:
      pins[match[1]] = match[2]
  return pins


def gpu_requirements() -> dict:
  return dict(line.split("==") for line in read("kubeflow/requirements-gpu.txt").splitlines()
              if line and not line.startswith("#"))


def test_the_gpu_variant_installs_the_cuda_libraries_tensorflow_was_built_for():
  pins = gpu_requirements()
  assert pins == and_cuda_pins(), "kubeflow/requirements-gpu.txt drifted from TF's and-cuda extra"
  info = tf.sysconfig.get_build_info()
  cuda = ".".join(pins["nvidia-cuda-runtime-cu12"].split(".")[:2])
  assert cuda == info["cuda_version"], (cuda, info["cuda_version"])
  assert pins["nvidia-cudnn-cu12"].split(".")[0] == info["cudnn_version"], (
      pins["nvidia-cudnn-cu12"], info["cudnn_version"])
  dockerfile = read("kubeflow/Dockerfile")
  assert "pip install --no-cache-dir -r requirements-gpu.txt" in dockerfile
  assert not re.search(r"^FROM nvidia/cuda", dockerfile, re.M), \
      "a CUDA base image brings its own cuDNN, not TF's"


def image_env() -> dict:
  """The environment kubeflow/Dockerfile's ENV lines give every process."""
  text = re.sub(r"\\\n\s*", " ", read("kubeflow/Dockerfile"))
  found = {}
  for line in re.findall(r"^ENV (.*)$", text, re.M):
    found.update(re.findall(r"(\w+)=(\S+)", line))
  return found


def test_the_image_runs_as_a_non_root_user_that_any_uid_can_replace():
  dockerfile = read("kubeflow/Dockerfile")
  users = re.findall(r"^USER (\S+)$", dockerfile, re.M)
  assert users and users[-1].isdigit() and int(users[-1]) != 0, users
  # OpenShift assigns any uid in group 0: the user's group is 0, and what a
  # step writes outside its outputs is /tmp.
  assert re.search(rf"useradd --uid {users[-1]} --gid 0 ", dockerfile), dockerfile
  env = image_env()
  assert env["HOME"] == env["TMPDIR"] == "/tmp", env


def test_the_image_declares_the_keras_choice_for_processes_it_does_not_start():
  from startup import KERAS_ENV
  env = image_env()
  assert {k: env.get(k) for k in KERAS_ENV} == KERAS_ENV, env


def test_a_trainer_given_more_gpus_than_tensorflow_sees_stops_and_names_why():
  """On this machine, whatever it has: as many GPUs as TensorFlow sees
  train; one more stops the Trainer, with the count and the reason."""
  found = len(tf.config.list_physical_devices("GPU"))
  distribute.require_gpus(0)  # no GPU asked for: trains wherever it is
  distribute.require_gpus(found)
  with pytest.raises(distribute.NoGPU) as e:
    distribute.require_gpus(found + 1)
  message = str(e.value)
  assert message.startswith(f"the Trainer was given {found + 1} GPU(s) but TensorFlow "
                            f"sees {found}: "), message
  assert "built for CUDA 12.3 and cuDNN 8" in message
  if not found:  # a machine without the driver: the library is named
    assert "cannot load libcuda.so.1" in message, message

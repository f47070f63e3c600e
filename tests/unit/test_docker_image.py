"""What the Kubeflow image holds agrees with what the steps need.

No image is built here (no Docker); these hold its recipe against the code:
- the packages: pyproject.toml's, the Dockerfile's COPY lines, and the
  project packages the installed code imports are the same set, since a
  step starts in an empty working directory where only installed packages
  import (tests/e2e/test_kubeflow_steps.py runs them that way);
- the GPU variant's CUDA libraries: the pins TensorFlow publishes for its
  own build, so a bump of either cannot drift apart unnoticed;
- a Trainer given a GPU that TensorFlow cannot use stops, naming what did
  not load (run here on the CPU, which has none).
How the packages import each other: tests/unit/test_architecture.py.
"""

import importlib.metadata
import os
import re

import pytest
import tensorflow as tf

from tests.conftest import REPO
from tests.unit.test_architecture import imported_by, packaged, project_packages, read
from trainer import distribute


def test_pyproject_the_dockerfile_and_the_imports_agree_on_the_packages():
  copied = set(re.findall(r"^COPY (\w+) \1$", read("kubeflow/Dockerfile"), re.M))
  data_folders = set()
  assert packaged() == project_packages(), (packaged(), project_packages())
  assert copied - data_folders == packaged(), (copied, packaged())
  for package in packaged():
    missing = imported_by(package) - packaged()
    assert not missing, f"{package}/ imports {missing}, which the image does not install"


def test_every_subpackage_is_listed_for_the_image_install():
  """The image installs the project without -e: a subpackage pyproject.toml
  does not list (kubeflow/steps, say) would be missing there, though an
  editable install finds it."""
  listed = set(re.findall(r'"([\w.]+)"', re.search(
      r"^packages = \[(.*?)\]", read("pyproject.toml"), re.M | re.S).group(1)))
  found, no_init = set(), []
  for package in packaged():
    for folder, _, names in os.walk(os.path.join(REPO, package)):
      if "__init__.py" in names:
        found.add(os.path.relpath(folder, REPO).replace(os.sep, "."))
      elif any(n.endswith(".py") for n in names):
        # A namespace package: an editable install finds it, the image's not
        # (components/image_check lacked one; its step failed on a cluster).
        no_init.append(os.path.relpath(folder, REPO))
  assert not no_init, f"expected an __init__.py in every folder of modules, found none in {no_init}"
  assert found == listed, (sorted(found - listed), sorted(listed - found))


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
  from runtime.startup import KERAS_ENV
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

"""kubeflow/compile/platform.py's flags and commands/kubeflow/compile.py's:
what each takes, and one line naming the flag for what it does not."""

import argparse

import pytest

from commands.kubeflow import compile as command
from kubeflow.compile import platform
from kubeflow.compile.compiler import check_name
from kubeflow.errors import CompileError


def test_tolerations_and_selectors_parse_to_the_kubernetes_fields():
  assert platform.toleration("Trainer:nvidia.com/gpu=present:NoSchedule") == (
      "Trainer", {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present",
                  "effect": "NoSchedule"})
  assert platform.toleration("Trainer:spot:NoExecute") == (
      "Trainer", {"key": "spot", "operator": "Exists", "effect": "NoExecute"})
  assert platform.node_selector("Trainer:pool=gpu") == ("Trainer", "pool", "gpu")
  assert platform.secret_env("s3-creds:accesskey=AWS_ACCESS_KEY_ID") == (
      "s3-creds", "accesskey", "AWS_ACCESS_KEY_ID")
  assert command.resource("Trainer:cpu=4,memory=16,gpus=1") == (
      "Trainer", {"cpu": 4.0, "memory_gb": 16.0, "gpus": 1})


@pytest.mark.parametrize("parse, text, words", [
    (platform.toleration, "Trainer:gpu=yes:Sometimes", "--toleration: expected"),
    (platform.node_selector, "pool=gpu", "--node-selector: expected NODE:KEY=VALUE"),
    (platform.secret_env, "s3-creds:accesskey", "--secret-env: expected SECRET:KEY=ENV_VAR"),
    (command.resource, "Trainer:cpus=4", "--resource 'Trainer:cpus=4': expected keys"),
    (command.env_var, "NOVALUE", "--env: expected NAME=VALUE"),
])
def test_a_bad_flag_is_one_line_naming_it(parse, text, words):
  with pytest.raises(argparse.ArgumentTypeError) as e:
    parse(text)
  assert str(e.value).startswith(words) and text in str(e.value), str(e.value)
  assert "\n" not in str(e.value)


def test_a_name_kubeflow_refuses_is_a_compile_error():
  check_name("digits-2")
  with pytest.raises(CompileError, match="pipeline name: expected lower-case letters"):
    check_name("Digits_2")

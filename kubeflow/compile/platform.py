"""Where each step's pod runs, and what it is given: the Kubernetes platform config.

The open-source Kubeflow Pipelines backend reads, beside the pipeline spec,
a PlatformSpec (the YAML file's second document) holding one
KubernetesExecutorConfig per executor (`driver.go` extendPodSpecPatch puts
it on the pod). GPU pools are usually tainted and labelled, so a GPU step
needs a node selector and a toleration as well as its GPU; a private
registry needs an image pull secret; and credentials (S3's) come from a
Kubernetes secret as environment variables, so that the spec itself carries
no secret. Vertex AI ignores this document.

Flags, each repeatable:
  --node-selector NODE:KEY=VALUE       e.g. Trainer:cloud.google.com/gke-accelerator=nvidia-tesla-t4
  --toleration NODE:KEY=VALUE:EFFECT   e.g. Trainer:nvidia.com/gpu=present:NoSchedule
  --toleration NODE:KEY:EFFECT         (operator Exists)
  --image-pull-secret NAME             every step
  --secret-env SECRET:KEY=ENV_VAR      every step, e.g. s3-creds:accesskey=AWS_ACCESS_KEY_ID
"""

import argparse
from typing import Dict, List, Sequence, Tuple

EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _node_and_rest(flag: str, text: str, form: str) -> Tuple[str, str]:
  node, sep, rest = text.partition(":")
  if not (sep and node and rest):
    raise argparse.ArgumentTypeError(f"{flag}: expected {form}, found {text!r}")
  return node, rest


def node_selector(text: str) -> Tuple[str, str, str]:
  """NODE:KEY=VALUE -> (NODE, KEY, VALUE)."""
  node, rest = _node_and_rest("--node-selector", text, "NODE:KEY=VALUE")
  key, sep, value = rest.partition("=")
  if not (sep and key):
    raise argparse.ArgumentTypeError(f"--node-selector: expected NODE:KEY=VALUE, found {text!r}")
  return node, key, value


def toleration(text: str) -> Tuple[str, Dict]:
  """NODE:KEY=VALUE:EFFECT or NODE:KEY:EFFECT -> (NODE, toleration)."""
  node, rest = _node_and_rest("--toleration", text, "NODE:KEY=VALUE:EFFECT")
  pair, sep, effect = rest.rpartition(":")
  key, eq, value = pair.partition("=")
  if not (sep and key) or effect not in EFFECTS:
    raise argparse.ArgumentTypeError(
        f"--toleration: expected NODE:KEY=VALUE:EFFECT or NODE:KEY:EFFECT with "
        f"EFFECT one of {', '.join(EFFECTS)}, found {text!r}")
  if eq:
    return node, {"key": key, "operator": "Equal", "value": value, "effect": effect}
  return node, {"key": key, "operator": "Exists", "effect": effect}


def secret_env(text: str) -> Tuple[str, str, str]:
  """SECRET:KEY=ENV_VAR -> (SECRET, KEY, ENV_VAR)."""
  secret, sep, rest = text.partition(":")
  key, eq, var = rest.partition("=")
  if not (secret and sep and key and eq and var):
    raise argparse.ArgumentTypeError(
        f"--secret-env: expected SECRET:KEY=ENV_VAR, found {text!r}")
  return secret, key, var


def add_flags(parser: argparse.ArgumentParser) -> None:
  parser.add_argument("--node-selector", action="append", type=node_selector, default=[],
                      metavar="NODE:KEY=VALUE", help="a node label a step's pod must match")
  parser.add_argument("--toleration", action="append", type=toleration, default=[],
                      metavar="NODE:KEY=VALUE:EFFECT", help="a taint a step's pod tolerates")
  parser.add_argument("--image-pull-secret", action="append", default=[], metavar="NAME",
                      help="a secret for pulling the image (every step)")
  parser.add_argument("--secret-env", action="append", type=secret_env, default=[],
                      metavar="SECRET:KEY=ENV_VAR",
                      help="an environment variable from a Kubernetes secret (every step)")


def platform_spec(args, executor_of: Dict[str, str],
                  placed_by_workers: Sequence[str] = ()) -> Dict:
  """The PlatformSpec of these flags as a dict, or {} when they set nothing.

  Args:
    args: parsed flags (add_flags).
    executor_of: component id -> its executor label in the pipeline spec.
    placed_by_workers: components whose node selectors and tolerations are
      their job's workers' alone (kubeflow/compile/train_job.py): their own
      pod stays off the workers' node pool.

  Raises:
    ArgumentTypeError: a flag names a component the pipeline does not have.
  """
  # kfp's protos load here, at compile time, not for --help.
  from google.protobuf import json_format
  from kfp.kubernetes import kubernetes_executor_config_pb2 as k8s
  from kfp.pipeline_spec import pipeline_spec_pb2
  configs = {label: k8s.KubernetesExecutorConfig() for label in executor_of.values()}

  def config_of(flag: str, node: str):
    if node not in executor_of:
      raise argparse.ArgumentTypeError(
          f"{flag}: expected a component ({', '.join(executor_of)}), found {node!r}")
    return configs[executor_of[node]]

  for node, key, value in args.node_selector:
    config = config_of("--node-selector", node)
    if node not in placed_by_workers:
      config.node_selector.labels[key] = value
  for node, tol in args.toleration:
    config = config_of("--toleration", node)
    if node not in placed_by_workers:
      config.tolerations.add(**tol)
  for config in configs.values():
    for name in args.image_pull_secret:
      config.image_pull_secret.add(secret_name=name)
    _secret_env(config, args.secret_env)
  used = {label: c for label, c in configs.items() if c.ByteSize()}
  if not used:
    return {}
  spec = pipeline_spec_pb2.PlatformSpec()
  executors = spec.platforms["kubernetes"].deployment_spec.executors
  for label, config in used.items():
    executors[label].update(json_format.MessageToDict(config))
  return json_format.MessageToDict(spec)


def _secret_env(config, entries: Sequence[Tuple[str, str, str]]) -> None:
  """Adds each secret's keys as environment variables to a
  KubernetesExecutorConfig."""
  by_secret: Dict[str, List[Tuple[str, str]]] = {}
  for secret, key, var in entries:
    by_secret.setdefault(secret, []).append((key, var))
  for secret, pairs in by_secret.items():
    entry = config.secret_as_env.add(secret_name=secret)
    for key, var in pairs:
      entry.key_to_env.add(secret_key=key, env_var=var)

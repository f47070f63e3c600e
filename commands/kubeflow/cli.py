"""python -m commands.kubeflow: compile the pipeline, submit a run, schedule retraining.

    python -m commands.kubeflow compile --image REGISTRY/NAME:TAG --pipeline-root URI --output-dir DIR
    python -m commands.kubeflow submit --spec DIR/pipeline.yaml --host URL
    python -m commands.kubeflow schedule --spec DIR/pipeline.yaml --host URL --name NAME --cron "0 3 * * *"
    python -m commands.kubeflow schedules list|pause|resume|delete [NAME] --host URL
    python -m commands.kubeflow runs --spec DIR/pipeline.yaml --host URL
    python -m commands.kubeflow retention --spec DIR/pipeline.yaml --keep N [--delete]
    python -m commands.kubeflow doctor --spec DIR/pipeline.yaml [--host URL] [--namespace NS]

submit runs doctor's checks first (--no-check skips them).
compile, submit and schedule take --notify URL: an exit step posts how each
run ended to that webhook.

Exit status: 0 done; 1 Kubeflow refused or could not be reached; 2 bad input
(flags, declaration, cron expression). Errors are one line; -v adds the
traceback and the libraries' logs.
"""

import argparse
import logging
import sys
import traceback
from typing import List, Optional

from commands.kubeflow import compile as compile_command
from commands.kubeflow import doctor, runs
from commands.kubeflow import retention as retention_command
from dataset import declaration
from kubeflow.api import schedules
from kubeflow.errors import CompileError, KubeflowError
from pipeline.config import ConfigError
from runtime import storage

BAD_INPUT = (declaration.DeclarationError, ConfigError, CompileError,
             schedules.CronError, argparse.ArgumentTypeError, storage.StorageError)


def parser() -> argparse.ArgumentParser:
  p = argparse.ArgumentParser(prog="python -m commands.kubeflow", description=__doc__.split("\n")[0])
  p.add_argument("-v", "--verbose", action="store_true")
  sub = p.add_subparsers(dest="command", required=True)
  compile_command.add_parser(sub)
  runs.add_parsers(sub)
  retention_command.add_parser(sub)
  doctor.add_parser(sub)
  return p


def main(argv: Optional[List[str]] = None) -> int:
  try:
    args = parser().parse_args(argv)
  except SystemExit as e:  # argparse has printed the one-line error
    return e.code
  if args.verbose:
    logging.getLogger().setLevel(logging.INFO)
  try:
    return args.func(args)
  except BAD_INPUT as e:
    status, message = 2, str(e)
  except KubeflowError as e:
    status, message = 1, str(e)
  except Exception as e:  # noqa: BLE001  (any other call Kubeflow refused, below)
    # kfp's API client is loaded only by a command that talked to Kubeflow.
    api = sys.modules.get("kfp_server_api")
    if api is None or not isinstance(e, api.ApiException):
      raise
    from kubeflow.api import client
    status, message = 1, f"Kubeflow refused the request: {client.describe(e)}"
  if args.verbose:
    traceback.print_exc()
  print(f"error: {message}", file=sys.stderr)
  return status

"""The flags `submit`, `schedule`, `schedules` and `runs` share
(commands/kubeflow/runs.py), for both backends."""

import argparse

from kubeflow.compile import exit_handler


def connection(parser: argparse.ArgumentParser) -> None:
  """Where the API is: Kubeflow Pipelines' endpoint, or Vertex AI's project
  and region."""
  parser.add_argument("--backend", choices=("kubeflow", "vertex"),
                      help="where to send it (default: the backend --spec was compiled for)")
  parser.add_argument("--project", help="--backend vertex: the Google Cloud project "
                      "(default: $GOOGLE_CLOUD_PROJECT, else your default credentials')")
  parser.add_argument("--region", help="--backend vertex: e.g. us-central1 "
                      "(default: $GOOGLE_CLOUD_REGION)")
  parser.add_argument("--host", help="Kubeflow Pipelines API endpoint "
                                     "(default: $KF_PIPELINES_ENDPOINT)")
  parser.add_argument("--namespace", help="Kubeflow profile namespace (multi-user)")
  parser.add_argument("--token", help="bearer token (default: the service-account token file "
                           "at $KF_PIPELINES_SA_TOKEN_PATH, if any)")


def run(parser: argparse.ArgumentParser) -> None:
  """A run's spec, runtime parameters and placement, for submit and schedule."""
  connection(parser)
  parser.add_argument("--spec", required=True, help="pipeline.yaml from 'compile'")
  parser.add_argument("--experiment", help="default: the pipeline's name")
  parser.add_argument("--data-root", help="runtime parameter: where the records are")
  parser.add_argument("--train-steps", type=int, help="runtime parameter")
  parser.add_argument("--serving-dir", help="runtime parameter: where models are pushed")
  parser.add_argument("--param", action="append", metavar="NAME=VALUE",
                      help="any other runtime parameter (repeatable)")
  parser.add_argument("--pipeline-root", help="where the run's outputs go (default: the "
                      "compiled --pipeline-root); sent as the run's own, which the "
                      "backend prefers to its namespace's default")
  parser.add_argument("--service-account", help="--backend vertex: the run's service "
                      "account (default: the project's Compute Engine default)")
  parser.add_argument("--network", help="--backend vertex: the VPC to peer, "
                      "projects/NUMBER/global/networks/NAME")
  parser.add_argument("--label", action="append", metavar="KEY=VALUE",
                      help="--backend vertex: a label on the run (repeatable)")
  parser.add_argument("--no-check", action="store_true",
                      help="send it without doctor's checks")
  exit_handler.add_flag(parser)

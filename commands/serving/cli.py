"""`python -m commands.serving versions|rollback|request|kserve|scores`: a
serving dir's versions, putting an earlier one back, a JSON client's
request, the versions on KServe, and the served model's score span by span.

`versions` and `rollback` work on any serving dir, a local run's or a Kubeflow pipeline's
(`--serving-dir`, a folder, gs:// or s3://), from what each version records
beside its model (serving/history.py); neither needs ML Metadata. Exit
status 2, with one line, when the serving dir cannot be reached or the
version asked for is not there. `rollback` writes a new version and deletes
nothing. `request` prints the REST predict request (`{"instances": [...]}`)
that `serving_default` takes for the first records of a TFRecord file, as a
JSON client sends them (serving/rest.py), for `curl -d @request.json`.
`kserve deploy|promote|status` points an InferenceService at a version (a
canary first, with `--canary-percent`), gives the canary all traffic, or
says where traffic goes (serving/kserve.py); `rollback --kserve NAME` also
points it at the copy it pushes, of the version that takes the traffic
(serving/kserve_rollback.py). A refusal of the cluster is one line, exit 2,
and a rollback's comes before its push.
`scores` lists what ServedScore recorded beside the versions
(`<serving dir>/monitoring/`) and, with `--html`, writes its chart.
"""

import argparse
import os
import sys
from typing import List, Optional

import serving
from dataset.fields import DeclarationError
from runtime import storage
from runtime.kube import ClusterError
from serving import ServingError, history, kserve, kserve_rollback

HERE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(prog="python -m commands.serving",
                                   description=" ".join(__doc__.split("\n\n")[0].split())
                                   .replace("`", ""))
  common = argparse.ArgumentParser(add_help=False)
  common.add_argument("--serving-dir", help="the serving dir (default: <output-dir>/"
                      "<pipeline>/serving, where local_runner.py pushes)")
  common.add_argument("--pipeline", default="digits",
                      help="the pipeline's name (default: %(default)s)")
  common.add_argument("--output-dir", default=os.path.join(HERE, "runs"),
                      help="local_runner.py's --output-dir (default: runs/)")
  commands = parser.add_subparsers(dest="command", required=True)
  commands.add_parser("versions", parents=[common],
                      help="each version, newest (served) first: when pushed, trained "
                           "on what, the judgement that blessed it")
  rollback = commands.add_parser("rollback", parents=[common],
                                 help="push a copy of an earlier version as the newest")
  rollback.add_argument("--to", metavar="VERSION",
                        help="the version to bring back (default: the one before the newest; "
                             "with --kserve and a canary in flight, the rolled-out one)")
  rollback.add_argument("--kserve", metavar="NAME", help="also point this InferenceService "
                        "at the copy (a canary's traffic returns at once to the rolled-out "
                        "version, which the copy is of)")
  kserve_parser = commands.add_parser("kserve", help="the serving dir's versions on KServe "
                                      "v0.15 to v0.20: deploy, promote, status")
  target = argparse.ArgumentParser(add_help=False, parents=[common])
  target.add_argument("--name", required=True, help="the InferenceService's name")
  actions = kserve_parser.add_subparsers(dest="action", required=True)
  deploy = actions.add_parser("deploy", parents=[target], help="point the InferenceService "
                              "at a version: created, as a canary, or outright")
  deploy.add_argument("--version", help="the version (default: the newest)")
  deploy.add_argument("--canary-percent", type=int, default=0,
                      help="the new version's share of traffic while the served one keeps "
                           "the rest (Knative mode; default: 0, outright)")
  deploy.add_argument("--mode", default="knative", choices=sorted(kserve.MODES),
                      help="KServe's deployment mode (default: %(default)s)")
  deploy.add_argument("--service-account", default="",
                      help="the predictor's, carrying the S3 Secret (default: none)")
  deploy.add_argument("--image", default=kserve.IMAGE, help="the TF Serving image "
                      "(default: %(default)s)")
  deploy.add_argument("--ready-seconds", type=int, default=kserve.Target.ready_seconds,
                      help="how long to wait for the version to be Ready (default: "
                           "%(default)s)")
  scores = commands.add_parser("scores", parents=[common], help="the served model's metric "
                               "span by span, as ServedScore recorded it, with its chart")
  scores.add_argument("--html", metavar="FILE", help="also write the chart there")
  actions.add_parser("promote", parents=[target], help="the canary takes all traffic")
  actions.add_parser("status", parents=[target], help="the version served, and where "
                     "traffic goes")
  request = commands.add_parser("request", help="print a REST predict request for the "
                                "first records of a TFRecord file")
  request.add_argument("--dataset", required=True, help="the dataset declaration (YAML)")
  request.add_argument("--examples", required=True,
                       help="a TFRecord file of tf.train.Example (plain or GZIP)")
  request.add_argument("--count", type=int, default=1, help="records sent (default: 1)")
  return parser


def request_lines(dataset: str, examples: str, count: int) -> List[str]:
  """The request body for the first `count` records of `examples`."""
  from dataset import declaration
  from dataset.records.format import BadRecord, read_records
  from serving import rest

  decl = declaration.load(dataset)
  storage.enable([examples])
  gfile = storage.gfile()
  if not gfile.exists(examples):
    raise ServingError(f"--examples: no file at {examples}")
  try:
    records = list(read_records(examples, limit=count, opener=gfile.GFile))
  except BadRecord as e:
    raise ServingError(f"{examples}: expected TFRecords of tf.train.Example, found a "
                       f"broken record at {e}") from None
  return [rest.request_body(records, rest.inputs(decl))]


def kserve_lines(args, serving_dir: str) -> List[str]:
  """`kserve deploy|promote|status`, and a rollback's InferenceService."""
  storage.enable([serving_dir])
  if args.command == "rollback":  # in the InferenceService's own mode
    return kserve_rollback.roll_back(args.kserve, serving_dir, args.to)
  if args.action == "deploy":
    target = kserve.Target(args.name, args.mode, args.canary_percent, args.service_account,
                           args.image, args.ready_seconds)
    newest = serving.latest(serving_dir)
    version = args.version or (os.path.basename(newest) if newest else "")
    if not version:
      raise ServingError(f"no version in {serving_dir} to deploy")
    return [kserve.KServe(target).deploy(serving_dir, version)]
  deployed = kserve.KServe(kserve.Target(args.name))
  return [deployed.promote()] if args.action == "promote" else kserve_status(deployed)


def scores_lines(serving_dir: str, html_file: Optional[str]) -> List[str]:
  """One line per score recorded beside the serving dir's versions, oldest
  span first; with `html_file`, the chart of them (pushes and rollbacks
  marked, the threshold drawn)."""
  from components.served_score import chart, score
  storage.enable([serving_dir])
  records = score.history(serving_dir)
  def scored(r: dict) -> str:
    return (f"{r['metric']} " + ("-" if r.get("value") is None else f"{r['value']:.4f}")
            + (f" [{r['low']:.4f}, {r['high']:.4f}]" if r.get("low") is not None else "")
            + f"  {r.get('count') or 0:.0f} examples")

  lines = []
  for r in records:  # then each declared slice's, indented
    span = f"{r['span']}" + (f" (data v{r['data_version']})" if r.get("data_version") else "")
    lines.append(f"span {span}  version {r['version']}  {scored(r)}  "
                 f"(threshold {r['threshold']})")
    lines += [f"  {s['slice']}  {scored({**s, 'metric': r['metric']})}"
              for s in r.get("slices", [])]
  if not records:
    # Not a fault: scores come with spans, after a first push.
    lines = [f"no score recorded in {serving_dir}/{score.MONITORING}: scores come with "
             "spans: each run over a new span scores the model served then on it "
             "(ServedScore), so the first appears with the first span after a push; "
             "data without spans has none (docs/retraining.md, \"The served model, "
             "span by span\")"]
    if html_file:
      lines.append(f"no chart written to {html_file}: no score to draw")
    return lines
  if html_file:
    with open(html_file, "w") as f:
      f.write(chart.svg(records, score.rollbacks(serving_dir)))
    lines.append(f"chart: {html_file}")
  return lines


def kserve_status(deployed: kserve.KServe) -> List[str]:
  """What the InferenceService serves and where its traffic goes."""
  found = deployed.found()
  status = found.get("status", {})
  ready = [c.get("status") for c in status.get("conditions", []) if c.get("type") == "Ready"]
  lines = [f"InferenceService {deployed.target.name}: version {kserve.served_version(found)}, "
           f"Ready {ready[0] if ready else '?'}, {status.get('url') or 'no URL yet'}"]
  for entry in status.get("components", {}).get("predictor", {}).get("traffic", []):
    lines.append(f"  {entry.get('percent', 0):>3}% to revision {entry.get('revisionName')}"
                 + (" (latest)" if entry.get("latestRevision") else "")
                 + (f" [{entry['tag']}]" if entry.get("tag") else ""))
  return lines


def command_lines(args) -> List[str]:
  if args.command == "request":  # the one command without a serving dir
    return request_lines(args.dataset, args.examples, args.count)
  serving_dir = args.serving_dir or os.path.join(args.output_dir, args.pipeline, "serving")
  if args.command == "kserve" or (args.command == "rollback" and args.kserve):
    return kserve_lines(args, serving_dir)
  if args.command == "scores":
    return scores_lines(serving_dir, args.html)
  if args.command == "rollback":
    return history.rollback_lines(serving_dir, args.to)
  return history.version_lines(serving_dir)


def main(argv: Optional[List[str]] = None) -> int:
  args = build_parser().parse_args(argv)
  try:
    lines = command_lines(args)
  except (ServingError, storage.StorageError, DeclarationError, ClusterError,
          ValueError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  print("\n".join(lines))
  return 0

"""The exit step: one message to a webhook, however the run ended.

Compiled with `--notify URL` (kubeflow/compile/exit_handler.py), it runs after every
other step has finished, failed or been skipped. It reads the steps' records
in the run's folder (kubeflow/steps/records.py), as one run record
(store/metadata/outcome.py), takes the run's state from Kubeflow's final
status when the spec asks for it (`--final-status`), else from the records
(kubeflow/steps/final_status.py), and posts one JSON message in
the shape Slack's incoming webhooks take (and Mattermost's and Rocket.Chat's):
a `text` line, and an attachment whose fields are the pipeline, the run, the
state, the step that failed and its message, the blessing with its metric,
the pushed version, and where the state came from.

A webhook that cannot be reached, or refuses the message, is logged; the
step still succeeds, so a notification never fails a run.

    python -m kubeflow.steps.notify '{{$}}'     (the executor input, from the backend)
"""

import json
import sys
import urllib.error
import urllib.request
from typing import List, Optional, Tuple

from kubeflow.steps import backend, final_status
from kubeflow.steps import records as step_records
from runtime import run_layout, startup, storage

TASK = "notify"
URL_PARAM = "notify_url"


def metric_words(outcome) -> Optional[str]:
  """`accuracy 0.9876`; None if the Evaluator did not run in this run."""
  if outcome.blessed is None or outcome.value is None:
    return None
  return f"{outcome.metric} {outcome.value:.4f}"


def payload(outcome, metric: Optional[str],
            verdict: Optional[final_status.Verdict] = None) -> dict:
  """The message, for a Slack-compatible incoming webhook, from the run's
  `store.metadata.outcome.Outcome` and its state (default: the records')."""
  verdict = verdict or final_status.verdict(None, outcome)
  pipeline, run, state = outcome.record.pipeline, outcome.record.run_id, verdict.state
  fields: List[Tuple[str, str]] = [("pipeline", pipeline), ("run", run), ("state", state)]
  words = [f"{pipeline}: run {run} {state}"]
  if verdict.failed_step:
    fields += [("failed step", verdict.failed_step), ("message", verdict.message)]
    words.append(verdict.message if verdict.failed_step == final_status.UNRECORDED
                 else f"at {verdict.failed_step}: {verdict.message}")
  if outcome.blessed is not None:
    said = "yes" if outcome.blessed else "no"
    fields.append(("blessed", f"{said} ({metric})" if metric else said))
    words.append(("blessed" if outcome.blessed else "not blessed")
                 + (f" ({metric})" if metric else ""))
  served = outcome.served_score.get("line")  # the served model fell (ServedScore)
  if served:
    fields.append(("served model", served))
    words.append(served)
  fields.append(("pushed version", outcome.pushed_version or "none"))
  if verdict.failed_step == final_status.UNRECORDED:  # the records' state is not the run's
    words.append(f"pushed version {outcome.pushed_version}" if outcome.pushed_version
                 else "nothing pushed")
  else:
    words.append(outcome.push_line())
  fields.append(("state from", verdict.source))
  return {"text": "; ".join(words),
          "attachments": [{
              "color": "good" if verdict.succeeded else "danger",
              "fallback": "; ".join(words),
              "fields": [{"title": t, "value": v, "short": len(v) <= 40} for t, v in fields]}]}


def post(url: str, message: dict, timeout: float = 20) -> Optional[str]:
  """Posts the message; returns why it failed, or None."""
  request = urllib.request.Request(url, data=json.dumps(message).encode(),
                                   headers={"Content-Type": "application/json"})
  try:
    with urllib.request.urlopen(request, timeout=timeout) as response:
      response.read()
    return None
  except (urllib.error.URLError, OSError, ValueError) as e:
    return f"{type(e).__name__}: {getattr(e, 'reason', None) or e}"


def main(argv: List[str]) -> int:
  executor_input = json.loads(argv[1])
  refused = backend.refusal(executor_input)
  if refused:
    print(refused, file=sys.stderr)
    return 1
  params = executor_input["inputs"]["parameterValues"]
  url, pipeline = params.get(URL_PARAM, ""), params["pipeline_name"]
  outputs = executor_input["outputs"]["artifacts"]
  uris = [a["uri"] for listed in outputs.values() for a in listed["artifacts"]]
  found = run_layout.locate(uris, pipeline, TASK)
  if not found:
    print(f"notify: no run folder in this step's output URIs {uris}; nothing to report",
          file=sys.stderr)
    return 0
  storage.enable([found.run])
  from store.metadata.outcome import Outcome  # TensorFlow: when the step runs, not when compiling
  outcome = Outcome(step_records.run_record(step_records.read(found.run), pipeline,
                                            found.run_id))
  metric = None
  try:
    metric = metric_words(outcome)
  except Exception as e:  # noqa: BLE001  (the message goes out without the figure)
    print(f"notify: could not read the Evaluator's metric: {e}", file=sys.stderr)
  verdict = final_status.verdict(params.get(final_status.PARAM), outcome)
  message = payload(outcome, metric, verdict)
  print(f"notify: {message['text']}\nnotify: state from {verdict.source}")
  if not url:
    print("notify: no URL (runtime parameter notify_url is empty); nothing posted")
    return 0
  problem = post(url, message)
  if problem:
    print(f"notify: could not post to {url}: {problem}; the run is not failed for it",
          file=sys.stderr)
  else:
    print(f"notify: posted to {url}")
  return 0


if __name__ == "__main__":
  startup.start()
  storage.exit(main(sys.argv))

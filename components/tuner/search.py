"""A search: one oracle, and trial workers that ask it for trials.

One worker runs in this process, straight on the oracle. N workers use
keras-tuner's distributed mode: this process is the chief, serving the
oracle over gRPC on 127.0.0.1 (keras-tuner's own OracleServicer), and each
worker is a process of its own (`python -m components.tuner.worker`) that asks it for
a trial through keras-tuner's OracleClient, trains it, and reports the
score, until the oracle says stop. The oracle hands each trial to one
worker only; a worker that dies fails its search here, with its log.
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from concurrent import futures
from typing import Callable, Dict, List

from components.tuner import space
from components.tuner.trial import TrialData, run_trial
from dataset.tuning import Tuning
from runtime.progress import console

HERE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def standing(oracle, tuning: Tuning) -> str:
  """How far the search is: trials done of the most, and the best so far."""
  found = trials(oracle, tuning)
  done = sum(t["score"] is not None for t in found)
  best = (f", best {tuning.objective} {found[0]['score']:.4f} so far (trial "
          f"{found[0]['trial']})" if done else "")
  return f"{done} of {tuning.max_trials} trials done{best}"


def work(oracle, tuner_id: str, tuning: Tuning, data: TrialData,
         say: Callable[[str], None] = print, chief: bool = False) -> int:
  """Asks `oracle` (an Oracle, or an OracleClient) for trials and runs them
  until it says stop; returns how many it ran, which a worker process (not
  the `chief`) also says. Which worker gets which trial is the oracle's, first
  come, first served: a worker that starts late may find none left."""
  ran = 0
  while True:
    trial = oracle.create_trial(tuner_id)
    if trial.status == "STOPPED":
      if not chief:
        say(f"{tuner_id} stopped: {ran} trial{'' if ran == 1 else 's'} run, none left")
      return ran
    if trial.status == "IDLE":  # Hyperband waits for its bracket to finish
      time.sleep(1)
      continue
    values = dict(trial.hyperparameters.values)
    steps = space.trial_steps(tuning, values)
    try:
      result = run_trial(data, space.training_values(values), steps, tuning.objective)
    except Exception:  # noqa: BLE001  (a setting that cannot train: the oracle moves on)
      trial.status, trial.message = "FAILED", traceback.format_exc()
      say(f"trial {trial.trial_id} ({tuner_id}) failed: {trial.message.splitlines()[-1]}")
      oracle.end_trial(trial)
      continue
    ran += 1
    result["worker"] = float(tuner_id.rsplit("-", 1)[-1])
    oracle.update_trial(trial.trial_id, result, step=steps)
    trial.status = "COMPLETED"
    oracle.end_trial(trial)
    # The chief's own oracle knows the whole search; a worker's client not.
    say(f"trial {trial.trial_id} ({tuner_id}): {tuning.objective} "
        f"{result[tuning.objective]:.4f} in {result['seconds']:.1f} s, "
        f"{json.dumps(space.training_values(values), sort_keys=True)}"
        + (f"; {standing(oracle, tuning)}" if chief else ""))


def _free_port() -> int:
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


def _serve(oracle, port: int):
  """keras-tuner's OracleServicer on 127.0.0.1:port (its start_server
  blocks, and polls its workers every 20 s; this returns the server)."""
  import grpc
  from keras_tuner.src import protos
  from keras_tuner.src.distribute.oracle_chief import OracleServicer
  # One thread, as keras-tuner's own chief: the oracle is not thread-safe
  # beyond its @synchronized methods.
  server = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
  protos.get_service_grpc().add_OracleServicer_to_server(OracleServicer(oracle), server)
  server.add_insecure_port(f"127.0.0.1:{port}")
  server.start()
  return server


def _run_workers(oracle, tuning: Tuning, data: TrialData, workers: int,
                 say: Callable[[str], None], every: float) -> None:
  port = _free_port()
  server = _serve(oracle, port)
  folder = tempfile.mkdtemp(prefix="tuner-")
  spec = os.path.join(folder, "spec.json")
  with open(spec, "w") as f:
    json.dump({"tuning": tuning.to_dict(), "data": data.to_dict()}, f)
  procs = []
  try:
    for i in range(workers):
      env = {**os.environ, "KERASTUNER_ORACLE_IP": "127.0.0.1",
             "KERASTUNER_ORACLE_PORT": str(port), "KERASTUNER_TUNER_ID": f"worker-{i}",
             "PYTHONPATH": os.pathsep.join(filter(None, [HERE, os.environ.get("PYTHONPATH")]))}
      log = open(os.path.join(folder, f"worker-{i}.log"), "w")
      procs.append((subprocess.Popen([sys.executable, "-m", "components.tuner.worker", spec], env=env,
                                     stdout=log, stderr=subprocess.STDOUT, cwd=HERE), log))
    # The workers' lines reach this log at the end; meanwhile, the oracle here
    # says how far the search is (runtime/progress/console.py: in place, or a line a
    # minute).
    live = console.Live(every)
    while any(proc.poll() is None for proc, _ in procs):
      time.sleep(1.0)
      live.update(f"  Tuner: {standing(oracle, tuning)}")
    live.done()
    for _, log in procs:
      log.close()
  finally:
    for proc, _ in procs:
      if proc.poll() is None:
        proc.kill()
    server.stop(grace=None)
  for i, (proc, log) in enumerate(procs):
    with open(log.name) as f:
      lines = f.read().splitlines()
    for line in lines:
      if line.startswith(("trial ", f"worker-{i} stopped: ")):
        say(line)
    if proc.returncode:
      raise RuntimeError(f"tuner worker-{i} exited with {proc.returncode}; the end of "
                         f"its log ({log.name}):\n" + "\n".join(lines[-30:]))


def search(tuning: Tuning, data: TrialData, workers: int = 1,
           say: Callable[[str], None] = print, seed: int = 0,
           state_dir: str = "", every: float = 60.0) -> List[Dict]:
  """Runs the search, resuming the one an interrupted attempt left in
  `state_dir`; returns its trials, best first (see `trials`). With workers,
  how far it is shows every `every` seconds in a log."""
  oracle = space.make_oracle(tuning, seed, state_dir)
  done = [t for t in oracle.trials.values() if t.status == "COMPLETED"]
  if done:
    say(f"resumed an interrupted search: {len(done)} of {tuning.max_trials} trials "
        f"already done, {len(oracle._retry_queue)} to run again")
  if workers <= 1:
    work(oracle, "worker-0", tuning, data, say, chief=True)
  else:
    _run_workers(oracle, tuning, data, workers, say, every)
  return trials(oracle, tuning)


def trials(oracle, tuning: Tuning) -> List[Dict]:
  """Every trial: id, values, status, objective score, steps, seconds and
  worker; the completed ones best first, then the rest."""
  out = []
  def metric(trial, name):
    return trial.metrics.get_last_value(name) if trial.metrics.exists(name) else None

  # A list first: the chief reads while its gRPC thread adds trials.
  for trial in list(oracle.trials.values()):
    worker = metric(trial, "worker")
    out.append({"trial": trial.trial_id, "status": trial.status,
                "values": space.training_values(dict(trial.hyperparameters.values)),
                "score": trial.score if trial.status == "COMPLETED" else None,
                "steps": int(metric(trial, "steps") or 0),
                "seconds": metric(trial, "seconds"),
                "worker": None if worker is None else int(worker)})
  higher = space.objective(tuning).direction == "max"
  done = sorted((t for t in out if t["score"] is not None),
                key=lambda t: -t["score"] if higher else t["score"])
  return done + [t for t in out if t["score"] is None]

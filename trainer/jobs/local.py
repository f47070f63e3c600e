"""The local engine: a job's workers as processes on this machine.

What `--train-workers N` does with the local runner, so that a user can
debug a multi-worker Trainer on a laptop: the same worker command each
cluster engine runs, with TF_CONFIG naming N ports on 127.0.0.1. Every
worker's lines are relayed, prefixed with its index. When one fails the
others are stopped at once: left alone they would fail too, within about
10 s (TF 2.16's coordination service heartbeat, trainer/distribute.py),
but stopping them keeps the first failure the one the run reports.
"""

import collections
import json
import logging
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Deque, List

from trainer.jobs.job import QUIET_ENV, Job, JobFailed


def free_ports(count: int) -> List[int]:
  sockets = [socket.socket() for _ in range(count)]
  for s in sockets:
    s.bind(("127.0.0.1", 0))
  ports = [s.getsockname()[1] for s in sockets]
  for s in sockets:
    s.close()
  return ports


def _relay(index: int, stream, tail: Deque[str]) -> None:
  for line in stream:
    tail.append(line.rstrip())
    sys.stderr.write(f"[worker {index}] {line}")
  stream.close()


def ended(status: int) -> str:
  """How a worker process ended, in words: `exited with status 1`, `was
  killed by SIGKILL`."""
  if status < 0:
    return f"was killed by {signal.Signals(-status).name}"
  return f"exited with status {status}"


def run(job: Job) -> None:
  """Starts the workers, relays their lines, waits for all of them.

  Raises:
    JobFailed: naming the worker that failed first, how it ended and its
      last line (its peers fail after it, on the broken collective); or
      the timeout.
  """
  hosts = [f"127.0.0.1:{p}" for p in free_ports(job.workers)]
  procs, tails, threads = [], [], []
  ends: "queue.Queue[int]" = queue.Queue()  # worker indexes, in the order they end
  # A quiet runner (runtime/startup.py `start`) leaves its root logger at ERROR.
  quiet = {QUIET_ENV: "1"} if logging.getLogger().level >= logging.ERROR else {}
  for index in range(job.workers):
    env = {**os.environ, **quiet, "TF_CONFIG": json.dumps(
        {"cluster": {"worker": hosts}, "task": {"type": "worker", "index": index}})}
    proc = subprocess.Popen(job.command, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    tail: Deque[str] = collections.deque(maxlen=20)
    threads.append(threading.Thread(target=_relay, args=(index, proc.stdout, tail),
                                    daemon=True))
    threading.Thread(target=lambda p=proc, i=index: (p.wait(), ends.put(i)),
                     daemon=True).start()
    threads[-1].start()
    procs.append(proc), tails.append(tail)
  deadline = time.monotonic() + job.timeout if job.timeout else None
  try:
    for _ in procs:
      try:
        index = ends.get(timeout=max(0, deadline - time.monotonic()) if deadline else None)
      except queue.Empty:
        raise JobFailed(f"training job {job.name}: not finished after "
                        f"{job.timeout:.0f} s (its timeout); stopped") from None
      if procs[index].returncode:
        threads[index].join(timeout=5)
        last = next((line for line in reversed(tails[index]) if line.strip()), "")
        raise JobFailed(f"training job {job.name}: worker {index} "
                        f"{ended(procs[index].returncode)}: {last or 'no output'}")
  finally:
    for proc in procs:
      if proc.poll() is None:
        proc.kill()
        proc.wait()
    for thread in threads:
      thread.join(timeout=5)

"""The serving check: a candidate SavedModel, loaded as a model server loads it.

    python -m components.serving_check.check REQUEST.json

runs in a process of its own (components/serving_check/serving_check.py starts it), which
imports TensorFlow and nothing of the training code: no TFX, no Transform,
no Keras model code. A model that needs any of them to load or answer fails
here, as it would in TF Serving. The request file names the model, a
TFRecord file of serialized eval examples (label removed, as a client sends
them), the contract the signatures promise (trainer/export.py
`serving_contract`) and the latency budget; the result goes to the file it
names, as JSON:

    {"passed": bool, "reason": the first failed check's line, or "",
     "checks": [{"name", "ok", "detail"}, ...],
     "latency_ms": {"batch_1": {"p50", "p99", "requests"}, "batch_64": {...}},
     "examples": N, "load_seconds": s}

The checks, in order: the model loads; it has the Examples signature
(`serving_examples`), taking one string tensor; it answers every example;
its outputs are exactly the declared keys, dtypes and shapes; every value
is finite; class probabilities lie in [0, 1] and sum to 1; `serving_default`
takes the declared JSON inputs and answers the same examples, sent as TF
Serving's REST API receives them, with the same outputs (`json`); and,
when a budget is declared, the p99 latency at each budgeted batch size is
within it (of the Examples signature: the graph behind both is one). Latency is
measured after a few warm-up calls (TF Serving's own warm-up does the same),
one request at a time, over the same examples: up to 200 requests at batch 1
and 50 at batch 64, but no more than LATENCY_SECONDS of them once 20 were
timed. A model that takes a second a batch (a CNN on large photos, on a
CPU) is then measured in seconds, not minutes; its p99 is then the
largest of 20, so a budget only errs on the safe side.
"""

import json
import sys
import time

import numpy as np
import tensorflow as tf

from components.serving_check.difference import difference
from runtime import startup, storage
from serving import rest

# Requests per batch size: p99 of 200 single requests is their third
# largest; of 50 batches of 64, their largest.
REQUESTS = {"batch_1": (1, 200), "batch_64": (64, 50)}
MIN_REQUESTS, LATENCY_SECONDS = 20, 5.0  # per batch size
WARM_UP = 3
SUM_TOLERANCE = 1e-3  # float32 softmax sums to 1 within a few ulps
# The same graph on the same values, batched alike: float32 rounding only.
JSON_TOLERANCE = 1e-5
RESULT_FILE = "serving_check.json"  # in the ServingCheck step's output


class Checks:
  """The checks so far; the first failure is the model's reason."""

  def __init__(self):
    self.done = []

  def add(self, name: str, ok: bool, detail: str) -> bool:
    self.done.append({"name": name, "ok": bool(ok), "detail": detail})
    return bool(ok)

  @property
  def reason(self) -> str:
    failed = [c for c in self.done if not c["ok"]]
    return f"{failed[0]['name']}: {failed[0]['detail']}" if failed else ""


def _words(specs: dict) -> str:
  return ", ".join(f"{k} {t} {s}" for k, (t, s) in sorted(specs.items())) or "nothing"


def _signature(model, contract: dict, checks: Checks):
  name = contract["signature"]
  if name not in model.signatures:
    checks.add("signature", False, f"expected a signature {name!r}, found "
               f"{sorted(model.signatures) or 'none'}")
    return None
  fn = model.signatures[name]
  _, inputs = fn.structured_input_signature
  specs = {k: (v.dtype.name, v.shape.as_list()) for k, v in inputs.items()}
  wanted = {contract["input"]: ("string", [None])}
  if not checks.add("signature", specs == wanted,
                    f"{name} takes {_words(wanted)}" if specs == wanted
                    else f"{name}'s inputs differ: {difference(wanted, specs)}"):
    return None
  return lambda batch: fn(**{contract["input"]: tf.constant(batch)})


def _check_outputs(outputs: dict, contract: dict, n: int, checks: Checks) -> bool:
  declared = contract["outputs"]
  if set(outputs) != set(declared):
    return checks.add("outputs", False, f"expected the outputs {sorted(declared)}, "
                      f"found {sorted(outputs)}")
  for key, spec in declared.items():
    found = (outputs[key].dtype.name, list(outputs[key].shape))
    expected = (spec["dtype"], [n if d is None else d for d in spec["shape"]])
    if found != expected:
      return checks.add("outputs", False, f"expected {key!r} as {expected[0]} "
                        f"{expected[1]} for {n} examples, found {found[0]} {found[1]}")
  checks.add("outputs", True, ", ".join(
      f"{k} {v['dtype']} {v['shape']}" for k, v in declared.items()))
  floats = {k: v.numpy() for k, v in outputs.items() if v.dtype.is_floating}
  bad = {k: int((~np.isfinite(v)).any(axis=tuple(range(1, v.ndim))).sum())
         for k, v in floats.items()}
  bad = {k: count for k, count in bad.items() if count}
  if not checks.add("finite", not bad, "every value finite" if not bad else "; ".join(
      f"{k}: NaN or infinity for {count} of {n} examples" for k, count in bad.items())):
    return False
  key = contract.get("probabilities")
  if key:
    probs = floats[key]
    sums = probs.sum(axis=1)
    off = int((np.abs(sums - 1) > SUM_TOLERANCE).sum()
              + ((probs < 0) | (probs > 1)).any(axis=1).sum())
    worst = float(sums[np.argmax(np.abs(sums - 1))])
    return checks.add("probabilities", not off,
                      f"{key} sum to 1 for every example" if not off else
                      f"expected {key} in [0, 1] summing to 1 for every example, found "
                      f"{off} of {n} that do not (a row sums to {worst:.4f})")
  return True


def _json(model, contract: dict, examples: list, expected: dict, checks: Checks) -> bool:
  """`serving_default`, called as TF Serving's REST API calls it: the same
  examples as a JSON client's row-format request (serving/rest.py writes it
  and reads it back by TF Serving's rules), answering as the Examples
  signature did."""
  terms = contract.get("json")
  if not terms:
    return True
  name, specs = terms["signature"], terms["inputs"]
  if name not in model.signatures:
    return checks.add("json", False, f"expected a signature {name!r} for JSON clients, "
                      f"found {sorted(model.signatures)}")
  fn = model.signatures[name]
  _, inputs = fn.structured_input_signature
  found = {k: (v.dtype.name, v.shape.as_list()) for k, v in inputs.items()}
  wanted = {k: (v["dtype"], v["shape"]) for k, v in specs.items()}
  if found != wanted:
    return checks.add("json", False, f"{name}'s inputs differ from the declared "
                      f"features: {difference(wanted, found)}")
  body = rest.request_body(examples, specs)
  try:
    request = rest.decode(body, specs)
  except rest.RequestRefused as e:
    return checks.add("json", False, f"TF Serving would refuse the REST request: {e}")
  try:
    answered = fn(**{k: tf.constant(v) for k, v in request.items()})
  except Exception as e:  # noqa: BLE001  (a signature that raises refuses the model)
    lines = str(e).strip().splitlines() or [""]
    return checks.add("json", False, f"{name} failed on {len(examples)} REST instances: "
                      f"{type(e).__name__}: {lines[0][:300]}")
  largest, same = 0.0, set(answered) == set(expected)
  for key in sorted(expected) if same else ():
    got, want = answered[key].numpy(), expected[key].numpy()
    same = same and got.shape == want.shape and (got.dtype.kind == "f" or (got == want).all())
    if same and got.dtype.kind == "f":
      largest = max(largest, float(np.nanmax(np.abs(got - want), initial=0.0)))
  ok, as_ = same and largest <= JSON_TOLERANCE, f"as {contract['signature']} did"
  return checks.add("json", ok, f"{name} answered {len(examples)} REST instances "
                    f"({len(body) // 1024} KB of JSON) {as_}, to {largest:.1e}" if ok else
                    f"expected {name} to answer {len(examples)} REST instances {as_}, "
                    f"to {JSON_TOLERANCE:g}; " + (f"the largest difference is {largest:.3g}"
                                                  if same else "found other keys or shapes"))


def _latency(serve, examples: list, budget_seconds: float) -> dict:
  result = {}
  for name, (size, count) in REQUESTS.items():
    batches = [[examples[(i * size + j) % len(examples)] for j in range(size)]
               for i in range(count)]
    for batch in batches[:WARM_UP]:
      serve(batch)
    seconds = []
    for batch in batches:
      start = time.perf_counter()
      serve(batch)
      seconds.append(time.perf_counter() - start)
      if len(seconds) >= MIN_REQUESTS and sum(seconds) >= budget_seconds:
        break
    ms = np.array(seconds) * 1000
    result[name] = {"p50": round(float(np.percentile(ms, 50)), 3),
                    "p99": round(float(np.percentile(ms, 99)), 3), "requests": len(ms)}
  return result


def check(model_dir: str, examples: list, contract: dict, budget: dict,
          latency_seconds: float = LATENCY_SECONDS) -> dict:
  """Runs every check on the model at model_dir; see the module's docstring."""
  checks = Checks()
  result = {"checks": checks.done, "latency_ms": {}, "examples": len(examples)}
  start = time.perf_counter()
  try:
    model = tf.saved_model.load(model_dir)
  except Exception as e:  # noqa: BLE001  (any load failure refuses the model)
    checks.add("loads", False, f"the SavedModel at {model_dir} did not load in a fresh "
               f"process: {type(e).__name__}: {str(e).strip().splitlines()[-1:]}")
    return {**result, "passed": False, "reason": checks.reason}
  result["load_seconds"] = round(time.perf_counter() - start, 3)
  checks.add("loads", True, f"in a fresh process, in {result['load_seconds']:.1f} s")
  serve = _signature(model, contract, checks)
  if serve is not None:
    try:
      outputs = serve(examples)
    except Exception as e:  # noqa: BLE001  (a signature that raises refuses the model)
      lines = str(e).strip().splitlines() or [""]
      checks.add("answers", False, f"{contract['signature']} failed on {len(examples)} "
                 f"eval examples: {type(e).__name__}: {lines[0][:300]}")
    else:
      checks.add("answers", True, f"{len(examples)} eval examples, without their label")
      if (_check_outputs(outputs, contract, len(examples), checks)
          and _json(model, contract, examples, outputs, checks)):
        result["latency_ms"] = _latency(serve, examples, latency_seconds)
        for name, limit in sorted(budget.items()):
          p99 = result["latency_ms"][name]["p99"]
          checks.add("latency", p99 <= limit,
                     f"p99 at {name.replace('_', ' ')}: {p99:.2f} ms, budget {limit:g} ms")
  return {**result, "passed": not checks.reason, "reason": checks.reason}


def describe(result: dict) -> str:
  """A result in one line: passed or why not, and the latencies."""
  latency = "; ".join(f"{b.replace('_', ' ')} p50 {f['p50']:.1f} ms, p99 {f['p99']:.1f} ms"
                      for b, f in result.get("latency_ms", {}).items())
  verdict = "passed" if result["passed"] else f"FAILED, {result['reason']}"
  return verdict + (f" ({latency})" if latency else "")


def main(argv) -> int:
  (request_path,) = argv
  with open(request_path) as f:
    request = json.load(f)
  storage.enable([request["model"]])
  examples = [r.numpy() for r in tf.data.TFRecordDataset(request["examples"])]
  result = check(request["model"], examples, request["contract"], request.get("budget", {}),
                 request.get("latency_seconds", LATENCY_SECONDS))
  with open(request["out"], "w") as f:
    json.dump(result, f, indent=1)
  return 0


if __name__ == "__main__":
  startup.start()
  storage.exit(main(sys.argv[1:]))

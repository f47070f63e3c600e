"""Benchmark: the Trainer's input pipeline against the read ceiling, the
tutorial loop and TFX's `tf_dataset_factory`, on the same files.

    .venv/bin/python -m bench.input_bench [--json FILE] [--plot FILE.png]

Every pipeline runs in this one process and one run, pass after pass in turn,
so that the ratios hold on a noisy machine. Figures are examples/s over one
pass after its first batch (warm-up), the median of --passes passes, each
pass pulled inside a graph as the Trainer's steps pull it.

  ceiling         parallel interleaved TFRecordDataset, batched, nothing
                  parsed; for J also decode_ceiling: the same JPEG bytes
                  decoded from memory, in parallel, by the project's decoder
  parse_ceiling   T only: the same, in batches of 1024, each parsed by one
                  `parse_example` with the full feature spec, and nothing
                  else: the honest ceiling of any pipeline that must parse
  loop            TFRecordDataset -> map(parse_single_example) -> shuffle ->
                  batch -> prefetch, as in TensorFlow's tutorials (images
                  decoded in that map)
  factory         tfx_bsl's TFExampleRecord.TensorFlowDataset, which TFX's
                  `data_accessor.tf_dataset_factory` returns, shuffling, with
                  a parallel per-batch tf.map_fn decode for images
  project         `trainer.input_pipeline.make_dataset` as the Trainer calls
                  it, training's shuffling on, a fresh dataset per pass (its
                  cache cold)

wait_fraction: a simulated accelerator that needs, per batch, 1.25 times the
time the ceiling (J: decode ceiling) takes to produce one, fed by the project
pipeline: the share of its time spent waiting because no batch was ready;
host_busy: the share lost handing over batches that were ready, because the
pipeline's threads held both cores (bench/accelerator.py tells the two
apart). The pipelines themselves are in bench/input_pipelines.py.
"""

import argparse
import statistics
import time

from runtime import startup

if __name__ == "__main__":  # the command; importing this sets nothing up
  startup.start(quiet=True)  # the Keras choice, before TF loads Keras; quiet about CUDA

# isort: split
import tensorflow as tf

from bench import accelerator, input_data, output
from bench.input_pipelines import pipelines_for, project

GOALS = {  # dataset: (pipeline, against, at least that ratio)
    "T": [("project", "ceiling", 0.60), ("project", "parse_ceiling", 0.85),
          ("project", "factory", 2.0), ("project", "loop", 8.0)],
    "R": [("project", "ceiling", 0.85)],
    "J": [("project", "decode_ceiling", 0.95)],
}
MAX_WAIT = 0.05


def _size(batch) -> tf.Tensor:
  if isinstance(batch, tuple):
    batch = batch[1]
  elif isinstance(batch, dict):
    batch = batch["label"]
  return tf.shape(batch, out_type=tf.int64)[0]


@tf.function
def _drain(iterator) -> tf.Tensor:
  """Examples in the rest of `iterator`, pulled inside a graph, as the
  Trainer's steps pull them (Keras's and the custom loop's alike)."""
  count = tf.constant(0, tf.int64)
  for batch in iterator:
    count += _size(batch)
  return count


def rate(dataset) -> float:
  """Examples/s over one pass, after the first batch.

  Pulled in a graph: pulling each batch into Python costs a fixed price
  per batch (26 tensors wrapped: about 0.2 ms), which training never pays
  and which would favour the ceilings' batches of 1024 over the Trainer's.
  """
  it = iter(dataset)
  next(it)
  start = time.perf_counter()
  count = int(_drain(it))
  return count / (time.perf_counter() - start)


def measure(datasets, passes: int) -> dict:
  results = {}
  for data in datasets:
    pipelines = pipelines_for(data)
    runs = {name: [] for name in pipelines}
    for p in range(passes):
      for name, make in pipelines.items():
        runs[name].append(rate(make()))
        print(f"  {data.name} pass {p + 1}/{passes} {name:15s} {runs[name][-1]:10,.0f}/s",
              flush=True)
    results[data.name] = {name: statistics.median(r) for name, r in runs.items()}
    feeder = "decode_ceiling" if data.name == "J" else "ceiling"
    step = 1.25 * data.batch_size / results[data.name][feeder]
    waits = accelerator.wait(project(data), step)
    print(f"  {data.name} simulated accelerator: input wait {waits['input_wait']:.1%}, "
          f"host busy {waits['host_busy']:.1%} (by the clock alone {waits['wall_wait']:.1%})",
          flush=True)
    results.setdefault("wait_fraction", {})[data.name] = waits["input_wait"]
    results.setdefault("host_busy", {})[data.name] = waits["host_busy"]
  return results


def goal_lines(results) -> list:
  """One line per goal: the figure, the goal, and whether it is met."""
  lines = []
  for name, goals in GOALS.items():
    if name not in results:
      continue
    r = results[name]
    for pipeline, against, least in goals:
      ratio = r[pipeline] / r[against]
      unit = "of" if least < 1 else "x"
      shown = f"{ratio:.0%} {unit} {against}" if least < 1 else f"{ratio:.1f}x {against}"
      goal = f"{least:.0%}" if least < 1 else f"{least:g}x"
      lines.append(f"{name}: {pipeline} {shown} (goal >= {goal}): "
                   f"{'met' if ratio >= least else 'NOT MET'}")
    wait = results["wait_fraction"][name]
    lines.append(f"{name}: wait_fraction {wait:.1%}, no batch ready (goal < {MAX_WAIT:.0%}): "
                 f"{'met' if wait < MAX_WAIT else 'NOT MET'}; besides, host busy "
                 f"{results.get('host_busy', {}).get(name, float('nan')):.1%}")
  return lines


def table(results) -> str:
  rows = [f"{'data':4s} {'pipeline':15s} {'examples/s':>11s} {'/ceiling':>9s} "
          f"{'/factory':>9s} {'/loop':>7s}"]
  for name in ("T", "R", "J"):
    if name not in results:
      continue
    r = results[name]
    for pipeline, value in r.items():
      rows.append(f"{name:4s} {pipeline:15s} {value:11,.0f} {value / r['ceiling']:9.2f} "
                  f"{value / r['factory']:9.2f} {value / r['loop']:7.1f}")
  return "\n".join(rows)


def plot(results, path: str) -> None:
  import matplotlib
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt
  names = [n for n in ("T", "R", "J") if n in results]
  fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.6))
  for ax, name in zip(list(axes) if len(names) > 1 else [axes], names):
    r = results[name]
    bars = ax.bar(list(r), [v / 1000 for v in r.values()],
                  color=["#999999" if "ceiling" in k else "#d62728" if k == "project"
                         else "#1f77b4" for k in r])
    ax.bar_label(bars, fmt="%.0f" if max(r.values()) >= 30_000 else "%.1f", fontsize=8)
    ax.set_title(f"{name}: wait {results['wait_fraction'][name]:.1%}")
    ax.set_ylabel("thousand examples/s")
    ax.tick_params(axis="x", labelrotation=30, labelsize=8)
  fig.suptitle("Input pipelines, one run on this machine")
  fig.tight_layout()
  fig.savefig(path, dpi=110)


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(prog="python -m bench.input_bench",
                                   description=__doc__.split("\n\n")[0])
  parser.add_argument("--data", default="runs/bench/input",
                      help="folder for the generated datasets (reused)")
  parser.add_argument("--table-examples", type=int, default=200_000)
  parser.add_argument("--raw-examples", type=int, default=50_000)
  parser.add_argument("--jpeg-examples", type=int, default=4_000)
  parser.add_argument("--jpeg-compression", choices=("GZIP", "NONE"), default="GZIP",
                      help="J's records: GZIP, as the pipeline's ExampleGen and "
                           "Transform write them, or NONE")
  parser.add_argument("--passes", type=int, default=3)
  parser.add_argument("--only", choices=("T", "R", "J"), action="append",
                      help="run these datasets only (repeatable)")
  parser.add_argument("--json", help="write the results as JSON here")
  parser.add_argument("--plot", help="write a PNG chart here")
  return parser


def main(argv=None) -> int:
  args = build_parser().parse_args(argv)

  counts = {"T": args.table_examples, "R": args.raw_examples, "J": args.jpeg_examples}
  names = args.only or ["T", "R", "J"]
  print(f"generating datasets in {args.data} (once)", flush=True)
  datasets = [input_data.generate(args.data, n, counts[n],
                                  args.jpeg_compression if n == "J" else "GZIP")
              for n in names]
  results = measure(datasets, args.passes)
  print()
  print(table(results))
  print()
  print("\n".join(goal_lines(results)))
  output.save(results, args.json, args.plot, plot)
  return 0


if __name__ == "__main__":
  raise SystemExit(main())

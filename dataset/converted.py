"""The dataset declaration that describes what convert wrote.

It is written beside the shards as `dataset.yaml`, with paths relative to
itself, so that `local_runner.py --dataset <out>/dataset.yaml` runs with no
hand editing. It is parsed back before it is written, so convert never
leaves a declaration that the pipeline would reject.
"""

import os
from typing import Optional

import yaml

from dataset import declaration
from dataset.convert.writer import Output, Result

SPAN = "span-{SPAN}"  # ImportExampleGen's span pattern: the latest span is read


def declaration_text(name: str, source_summary: dict, output: Output,
                     span: Optional[int], source: str) -> str:
  """YAML for the declaration of one convert run.

  Args:
    name: the dataset's name.
    source_summary: the source's `declaration(...)` dict: label, classes,
      features.
    output: how the shards were written.
    span: the span number when writing `span-<N>/`, else None.
    source: what was converted, for the header comment.
  """
  suffix = ".tfrecord.gz" if output.compression == "GZIP" else ".tfrecord"
  base = f"{SPAN}/" if span is not None else ""
  data = {"root": ".", "compression": output.compression}
  if output.eval_percent:
    data["splits"] = {s: f"{base}{s}/*{suffix}" for s in ("train", "eval")}
  else:
    data["pattern"] = f"{base}*{suffix}"
  label = dict(source_summary["label"])
  if source_summary.get("classes"):
    label["classes"] = list(source_summary["classes"])
  doc = {"name": name, "data": data, "label": label,
         "features": source_summary["features"]}
  if label.get("kind") == "regression":
    # No threshold fits every regression target: a starting point to edit,
    # the spread of the label itself (a model that always predicts the mean).
    doc["evaluation"] = {"metric": "rmse",
                         "threshold": round(float(source_summary["label_std"]), 6)}
  text = (f"# Written by `tfrecords convert` from {source}.\n"
          "# Run it: python local_runner.py --dataset <this file>\n"
          + yaml.safe_dump(doc, sort_keys=False))
  return text


def check_declaration(text: str, path: str) -> None:
  """Parses the text as the pipeline would; raises DeclarationError if not valid."""
  declaration.parse(yaml.safe_load(text), path)


def write_atomically(text: str, path: str) -> None:
  tmp = path + ".tmp"
  with open(tmp, "w") as f:
    f.write(text)
  os.replace(tmp, path)


def result_line(result: Result) -> str:
  mb = result.bytes / 1e6
  rate = result.total / max(result.seconds, 1e-9)
  return (f"wrote {result.total} examples ({mb:.1f} MB) in {result.seconds:.1f} s: "
          f"{rate:,.0f} examples/s, {mb / max(result.seconds, 1e-9):.1f} MB/s")

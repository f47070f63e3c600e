"""Benchmark: the image check's rates and cost, and how the cost grows.

    python -m bench.image_check_bench [--sizes 10000 100000] [--rates-only]
                                      [--json out.json]

First its rates: false pairs per 1,000 distinct pictures on each family of
real pictures that holds no copies (tests/distinct_images.py: scikit-learn's
digits at 28x28 and at 32x32 in PNG and JPEG, tiles of its two sample
photos, generated icons, generated scans), and the share of planted copies
of each kind found with their original (tests/planted_images.py, 300 of
each). docs/tfrecords.md gives what it printed.

For each size, N distinct 96x96 JPEG pictures (tests/planted_images.py),
5% of them copied once more (re-encoded at quality 60), in a random order,
are fingerprinted
(decode, pHash, quality numbers) and grouped into copies
(components/image_check/duplicates.py); and the same number of crops of
the photos benchmark's two photos (bench/photos.py: every image overlaps
many others by design, the case a bucketed search can degrade on). Prints
each stage's seconds and images per second, and the growth of the time
against the growth of the images, between the smallest and the largest
size: near 1 (linear) is the goal, the issue's bound is about 12x for
10x the images. One process.

Then the pipeline's step itself (components/image_check/image_check.py) on
the photo crops, written as ImportExampleGen leaves them (GZIP shards of
about 4 MB, 4 in 5 images to train): its executor, every decision at
`warn`, on Beam's DirectRunner with the arguments a local run would choose
for that much data (runtime/beam.py: one worker process per core from 50
MB on), the report's thumbnails included. Its share of a whole run is
bench/e2e_bench.py's (`--data photos`).
"""

import argparse
import json
import os
import tempfile
import time
from typing import List, Optional


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(prog="python -m bench.image_check_bench",
                                   description=__doc__.split("\n")[0])
  parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000],
                      metavar="N", help="images per case (default 10000 100000)")
  parser.add_argument("--rates-only", action="store_true",
                      help="print the false-pair and recall rates only, not the timings")
  parser.add_argument("--json", metavar="PATH", help="also write the results here")
  return parser


def _pairs(images: List[bytes]):
  """The near pairs among `images` as the check finds them, by index, and
  each image's distinct picture (exact copies are one)."""
  from components.image_check import copies, duplicates
  from components.image_check.findings import Item
  from components.image_check.fingerprint import fingerprint
  from dataset.types import Image
  prints = [fingerprint(data, Image("jpeg", 96, 96, 3)) for data in images]
  pictures = copies.distinct([Item("train", "f", i, "0", p) for i, p in enumerate(prints)])
  pairs = duplicates.near_pairs([prints[own[0]].phash for own in pictures],
                                [prints[own[0]].thumb for own in pictures])
  return {tuple(p) for p in pairs.tolist()}, {i: n for n, own in enumerate(pictures)
                                               for i in own}


def rates(planted: int = 300) -> dict:
  """False pairs per 1,000 pictures of each family; recall of each kind."""
  from tests.distinct_images import FAMILIES
  from tests.planted_images import VARIANTS, encode, picture
  out = {"false_pairs_per_1000": {}, "recall": {}}
  for family, make in FAMILIES.items():
    images = [data for _, data in make()]
    pairs, _ = _pairs(images)
    out["false_pairs_per_1000"][family] = 1000 * len(pairs) / len(images)
    print(f"false pairs {family:>22}: {len(pairs)} among {len(images)} "
          f"({1000 * len(pairs) / len(images):.1f} per 1,000)", flush=True)
  pictures = [picture(seed) for seed in range(planted)]
  originals = [encode(p) for p in pictures]
  images = list(originals)
  for make in VARIANTS.values():
    images += [make(p, data) for p, data in zip(pictures, originals)]
  pairs, picture_of = _pairs(images)
  apart = {picture_of[i] for i in range(planted)}
  false = sum(1 for pair in pairs if set(pair) <= apart)
  out["false_pairs_per_1000"]["planted pictures"] = 1000 * false / planted
  print(f"false pairs {'planted pictures':>22}: {false} among {planted} "
        f"({1000 * false / planted:.1f} per 1,000)", flush=True)
  for number, variant in enumerate(VARIANTS, start=1):
    found = sum(1 for i in range(planted) if tuple(sorted(
        (picture_of[i], picture_of[number * planted + i]))) in pairs
        or picture_of[i] == picture_of[number * planted + i])
    out["recall"][variant] = found / planted
    print(f"recall {variant:>12}: {found} of {planted} ({found / planted:.3f})", flush=True)
  return out


def _distinct(count: int) -> List[bytes]:
  """Distinct pictures and 5% re-encoded copies, in a random order: a copy
  and its original anywhere in the data, as in a user's."""
  import random

  from tests.planted_images import VARIANTS, encode, picture
  pictures = [picture(seed) for seed in range(count - count // 20)]
  images = [encode(p) for p in pictures]
  images += [VARIANTS["quality60"](p, None) for p in pictures[:count // 20]]
  random.Random(0).shuffle(images)
  return images


def _photos(count: int) -> List[bytes]:
  import numpy as np

  from bench.photos import SIZE, _crops
  assert SIZE == 96
  return [data for _, data in _crops(count, SIZE, np.random.default_rng(0))]


def _time(images: List[bytes]) -> dict:
  from components.image_check import duplicates
  from components.image_check.fingerprint import fingerprint
  from dataset.types import Image
  jpeg = Image("jpeg", 96, 96, 3)
  start = time.perf_counter()
  prints = [fingerprint(data, jpeg) for data in images]
  fingerprinted = time.perf_counter()
  pairs = duplicates.near_pairs([p.phash for p in prints], [p.thumb for p in prints])
  grouped = time.perf_counter()
  return {"images": len(images), "fingerprint_s": fingerprinted - start,
          "group_s": grouped - fingerprinted, "pairs": len(pairs),
          "in_pairs": len(set(pairs.ravel().tolist()))}


def _step(images: List[bytes], folder: str) -> dict:
  """The ImageCheck step's executor over `images`, as a local run runs it."""
  from tfx.dsl.components.base.base_beam_executor import BaseBeamExecutor
  from tfx.types import standard_artifacts

  from components.image_check.image_check import Executor
  from dataset.convert.rows import write_rows
  from dataset.image_checks import DEFAULTS
  from runtime.beam import local_beam_args
  rows = [{"image": [data], "label": [i % 8]} for i, data in enumerate(images)]
  splits = {"train": [r for i, r in enumerate(rows) if i % 5], "eval": rows[::5]}
  examples = standard_artifacts.Examples()
  examples.uri, examples.split_names = f"{folder}/examples", json.dumps(list(splits))
  for name, part in splits.items():
    write_rows(part, f"{examples.uri}/Split-{name}", "data", shard_mb=4)
  result = standard_artifacts.String()
  result.uri = f"{folder}/ImageCheck/result/1/value"
  os.makedirs(os.path.dirname(result.uri))
  declared = {"name": "photos", "path": "", "data": {"root": ""},
              "label": {"name": "label", "kind": "classes", "num_classes": 8},
              "features": [{"name": "image", "kind": "image", "image": {
                  "encoding": "jpeg", "height": 96, "width": 96, "channels": 3}}],
              "image_checks": [[kind, "warn"] for kind in DEFAULTS]}
  mb = sum(len(data) for data in images) / 1e6
  beam_args = local_beam_args(mb)
  start = time.perf_counter()
  Executor(BaseBeamExecutor.Context(beam_pipeline_args=beam_args)).Do(
      {"examples": [examples]}, {"result": [result]},
      {"declaration": json.dumps(declared), "train_args": json.dumps({"splits": ["train"]}),
       "eval_splits": json.dumps(["eval"]), "cache_dir": ""})
  seconds = time.perf_counter() - start
  found = json.loads(result.read())
  return {"images": len(images), "mb": mb, "beam_args": beam_args, "step_s": seconds,
          "files": found["files"],
          "found": {f["kind"]: f["count"] for f in found["findings"]}}


def main(argv: Optional[List[str]] = None) -> int:
  args = build_parser().parse_args(argv)
  results = {"rates": rates()}
  if args.rates_only:
    if args.json:
      from bench.output import save
      save(results, args.json, None, None)
    return 0
  for case, make in (("distinct", _distinct), ("photo crops", _photos)):
    results[case] = []
    for size in args.sizes:
      found = _time(make(size))
      results[case].append(found)
      total = found["fingerprint_s"] + found["group_s"]
      print(f"{case:>11} {size:>7}: fingerprint {found['fingerprint_s']:7.1f} s, "
            f"group {found['group_s']:6.2f} s, {size / total:6.0f} images/s; "
            f"{found['in_pairs']} images in {found['pairs']} near pairs")
    first, last = results[case][0], results[case][-1]
    if last is not first:
      grew = {stage: last[stage] / max(first[stage], 1e-9)
              for stage in ("fingerprint_s", "group_s")}
      print(f"{case:>11}: {last['images'] / first['images']:.0f}x the images took "
            f"{grew['fingerprint_s']:.1f}x to fingerprint, {grew['group_s']:.1f}x to group")
  results["step"] = []
  for size in args.sizes:
    with tempfile.TemporaryDirectory(prefix="image_check_bench-") as folder:
      found = _step(_photos(size), folder)
    results["step"].append(found)
    print(f"       step {size:>7}: {found['step_s']:7.1f} s, "
          f"{size / found['step_s']:6.0f} images/s ({found['files']} files, "
          f"{found['mb']:.0f} MB, Beam {' '.join(found['beam_args']) or 'in memory'}); "
          f"found {found['found']}")
  first, last = results["step"][0], results["step"][-1]
  if last is not first:
    print(f"       step: {last['images'] / first['images']:.0f}x the images took "
          f"{last['step_s'] / first['step_s']:.1f}x (the issue's bound: about 12x)")
  if args.json:
    from bench.output import save
    save(results, args.json, None, None)
  return 0


if __name__ == "__main__":
  raise SystemExit(main())

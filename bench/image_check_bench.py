"""Benchmark: the image check's cost, and how it grows with the images.

    python -m bench.image_check_bench [--sizes 10000 100000] [--json out.json]

For each size, N distinct 96x96 JPEG pictures (tests/planted_images.py),
5% of them copied once more (re-encoded at quality 60), are fingerprinted
(decode, pHash, quality numbers) and grouped into copies
(components/image_check/duplicates.py); and the same number of crops of
the photos benchmark's two photos (bench/photos.py: every image overlaps
many others by design, the case a bucketed search can degrade on). Prints
each stage's seconds and images per second, and the growth of the time
against the growth of the images, between the smallest and the largest
size: near 1 (linear) is the goal, the issue's bound is about 12x for
10x the images. One process; the pipeline's step spreads the
fingerprinting over Beam's workers.
"""

import argparse
import time
from typing import List, Optional


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(prog="python -m bench.image_check_bench",
                                   description=__doc__.split("\n")[0])
  parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000],
                      metavar="N", help="images per case (default 10000 100000)")
  parser.add_argument("--json", metavar="PATH", help="also write the results here")
  return parser


def _distinct(count: int) -> List[bytes]:
  from tests.planted_images import VARIANTS, encode, picture
  pictures = [picture(seed) for seed in range(count - count // 20)]
  images = [encode(p) for p in pictures]
  return images + [VARIANTS["quality60"](p, None) for p in pictures[:count // 20]]


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
  groups = duplicates.groups([p.phash for p in prints], [p.digest for p in prints],
                            [p.thumb for p in prints])
  grouped = time.perf_counter()
  return {"images": len(images), "fingerprint_s": fingerprinted - start,
          "group_s": grouped - fingerprinted, "groups": len(groups),
          "in_groups": sum(len(g) for g in groups)}


def main(argv: Optional[List[str]] = None) -> int:
  args = build_parser().parse_args(argv)
  results = {}
  for case, make in (("distinct", _distinct), ("photo crops", _photos)):
    results[case] = []
    for size in args.sizes:
      found = _time(make(size))
      results[case].append(found)
      total = found["fingerprint_s"] + found["group_s"]
      print(f"{case:>11} {size:>7}: fingerprint {found['fingerprint_s']:7.1f} s, "
            f"group {found['group_s']:6.2f} s, {size / total:6.0f} images/s; "
            f"{found['in_groups']} images in {found['groups']} groups of copies")
    first, last = results[case][0], results[case][-1]
    if last is not first:
      grew = {stage: last[stage] / max(first[stage], 1e-9)
              for stage in ("fingerprint_s", "group_s")}
      print(f"{case:>11}: {last['images'] / first['images']:.0f}x the images took "
            f"{grew['fingerprint_s']:.1f}x to fingerprint, {grew['group_s']:.1f}x to group")
  if args.json:
    from bench.output import save
    save(results, args.json, None, None)
  return 0


if __name__ == "__main__":
  raise SystemExit(main())

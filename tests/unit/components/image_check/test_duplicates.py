"""Copies among many images (components/image_check/duplicates.py): planted
copies of each kind found with their original, distinct pictures not paired."""

import pytest

from components.image_check import duplicates
from components.image_check.fingerprint import fingerprint
from dataset.types import Image
from tests.planted_images import VARIANTS, encode, picture

DISTINCT, COPIED = 1000, 200  # pictures, and how many of them get each kind of copy
JPEG = Image("jpeg", 96, 96, 3)
# The floors: exact and re-encoded copies, and the rest.
RECALL = {"exact": 0.95, "quality60": 0.95, "resized90": 0.9, "cropped4": 0.9,
          "brightened10": 0.9}


@pytest.fixture(scope="module")
def found():
  pictures = [picture(seed) for seed in range(DISTINCT)]
  originals = [encode(p) for p in pictures]
  items = [("original", i, data) for i, data in enumerate(originals)]
  for variant, make in VARIANTS.items():
    items += [(variant, i, make(pictures[i], originals[i])) for i in range(COPIED)]
  prints = [fingerprint(data, JPEG) for _, _, data in items]
  groups = duplicates.groups([p.phash for p in prints], [p.digest for p in prints],
                            [p.thumb for p in prints])
  group_of = {index: g for g, members in enumerate(groups) for index in members}
  return {"items": items, "groups": groups, "group_of": group_of}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_each_kind_of_copy_is_found_with_its_original(found, variant):
  items, group_of = found["items"], found["group_of"]
  copies = [(index, original) for index, (kind, original, _) in enumerate(items)
            if kind == variant]
  hits = sum(1 for index, original in copies
             if index in group_of and group_of[index] == group_of.get(original))
  assert hits / len(copies) >= RECALL[variant], (
      f"{variant}: expected at least {RECALL[variant]:.0%} of {len(copies)} copies "
      f"grouped with their original, found {hits}")


def test_distinct_pictures_are_almost_never_paired(found):
  originals = [i for i, (kind, _, _) in enumerate(found["items"]) if kind == "original"]
  by_group = {}
  for index in originals:
    if index in found["group_of"]:
      by_group.setdefault(found["group_of"][index], []).append(index)
  false_pairs = sum(len(m) * (len(m) - 1) // 2 for m in by_group.values())
  assert false_pairs <= 1, (f"expected at most 1 false pair among {DISTINCT} distinct "
                            f"pictures, found {false_pairs}: {list(by_group.values())[:5]}")


def test_a_bucket_of_one_pictures_crops_stays_near_linear():
  """Crops of one picture share keys in every table: each member meets at
  most 2 x BUCKET_CAP others there, not every other, and the members are
  all linked."""
  import numpy as np
  from scipy.sparse import coo_matrix
  from scipy.sparse.csgraph import connected_components
  n = 5000
  pairs = duplicates.candidate_pairs(np.zeros(n, dtype=np.uint64), np.random.permutation(n))
  assert len(pairs) <= duplicates.BUCKET_CAP * n, len(pairs)
  graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
  assert connected_components(graph, directed=False)[0] == 1


def test_copies_far_into_a_large_collection_are_found_as_often_as_early_ones():
  """100,000 images make buckets of about 24 a table: a pair of copies
  late in the data must still meet (a bucket compared with its first
  members only found 46 of 100 such pairs)."""
  import numpy as np
  rng = np.random.default_rng(5)
  n, planted = 100_000, 100
  hashes = rng.integers(0, 2**63, n, dtype=np.int64).astype(np.uint64)
  thumbs = rng.standard_normal((n, 64))
  thumbs = np.round(thumbs / np.linalg.norm(thumbs, axis=1, keepdims=True) * 127)
  copies = rng.choice(np.arange(n // 2, n - 1, 2), planted, replace=False)
  for index in copies:  # its copy right after it: 8 bits flipped, the same thumbnail
    flips = rng.choice(64, 8, replace=False)
    hashes[index + 1] = hashes[index] ^ np.uint64(sum(1 << int(b) for b in flips))
    thumbs[index + 1] = thumbs[index]
  groups = duplicates.groups([int(h) for h in hashes], [str(i) for i in range(n)],
                             [t.astype(np.int8).tobytes() for t in thumbs])
  paired = {tuple(g) for g in groups if len(g) == 2}
  found = sum(1 for index in copies if (index, index + 1) in paired)
  assert found >= 0.95 * planted, f"expected at least 95 of {planted} late pairs, found {found}"

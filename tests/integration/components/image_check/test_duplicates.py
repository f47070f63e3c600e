"""Near copies among many images (components/image_check/duplicates.py):
planted copies of each kind found with their original; distinct pictures
not paired (handwriting at MNIST's size: tests/unit/commands/tfrecords/
test_check_cmd.py, through convert and check); groups shown never chain."""

import pytest

from components.image_check import copies, duplicates
from components.image_check.findings import Item
from components.image_check.fingerprint import THUMB, fingerprint
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
  pictures = copies.distinct([Item("train", "f", i, "0", p) for i, p in enumerate(prints)])
  picture_of = {index: n for n, own in enumerate(pictures) for index in own}
  pairs = duplicates.near_pairs([prints[own[0]].phash for own in pictures],
                                [prints[own[0]].thumb for own in pictures])
  return {"items": items, "picture_of": picture_of, "pairs": {tuple(p) for p in pairs.tolist()}}


def _copies(found, a: int, b: int) -> bool:
  """Items a and b are the same bytes, or a near pair."""
  x, y = sorted((found["picture_of"][a], found["picture_of"][b]))
  return x == y or (x, y) in found["pairs"]


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_each_kind_of_copy_is_found_with_its_original(found, variant):
  planted = [(index, original) for index, (kind, original, _) in enumerate(found["items"])
             if kind == variant]
  hits = sum(1 for index, original in planted if _copies(found, index, original))
  assert hits / len(planted) >= RECALL[variant], (
      f"{variant}: expected at least {RECALL[variant]:.0%} of {len(planted)} copies "
      f"paired with their original, found {hits}")


def test_distinct_pictures_are_almost_never_paired(found):
  originals = {found["picture_of"][i] for i, (kind, _, _) in enumerate(found["items"])
               if kind == "original"}
  false_pairs = [p for p in found["pairs"] if set(p) <= originals]
  assert len(false_pairs) <= 1, (f"expected at most 1 false pair among {DISTINCT} distinct "
                                 f"pictures, found {len(false_pairs)}: {false_pairs[:5]}")


def test_groups_shown_never_chain():
  """A~B and B~C with A and C apart: B groups with one of them only."""
  import numpy as np
  assert duplicates.cliques(3, np.array([[0, 1], [1, 2]])) == [[0, 1]]
  assert duplicates.cliques(4, np.array([[0, 1], [1, 2], [0, 2], [2, 3]])) == [[0, 1, 2]]


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
  thumbs = rng.integers(0, 256, (n, THUMB * THUMB), dtype=np.uint8)
  planted_at = rng.choice(np.arange(n // 2, n - 1, 2), planted, replace=False)
  for index in planted_at:  # its copy right after it: 8 bits flipped, the same thumbnail
    flips = rng.choice(64, 8, replace=False)
    hashes[index + 1] = hashes[index] ^ np.uint64(sum(1 << int(b) for b in flips))
    thumbs[index + 1] = thumbs[index]
  pairs = duplicates.near_pairs([int(h) for h in hashes], [t.tobytes() for t in thumbs])
  paired = {tuple(p) for p in pairs.tolist()}
  found = sum(1 for index in planted_at if (index, index + 1) in paired)
  assert found >= 0.95 * planted, f"expected at least 95 of {planted} late pairs, found {found}"

"""Near copies among many distinct pictures, without comparing every pair.

Candidates are pHashes at most NEAR_BITS apart (fingerprint.py), found by
bit-sampling locality-sensitive hashing (Indyk and Motwani; Gionis, Indyk
and Motwani 1999): each of TABLES tables keys an image by KEY_BITS bits of
its hash at fixed positions, and only images that share a key somewhere
are compared. Two hashes d bits apart share a table's key with
probability (1 - d/64)^KEY_BITS: over 48 tables, 0.98 at d = 12 (a copy
cropped by 4 pixels is 8 bits away at the median, 12 at the 95th
percentile), and 2^-12 a table for unrelated images (d near 32), so the
comparisons grow with the images, not with their pairs. Within a bucket,
each member is compared with the BUCKET_CAP members that follow it in an
order of the table's own (a fixed random rank per image and table), so a
bucket that is large all the same (data made of one picture's crops,
bench/photos.py; or n/4096 images a bucket on large data) costs BUCKET_CAP
comparisons a member, and no member is always last: two images far apart
in the data meet in some table as often as two near its start.

A candidate is a near copy when the 8x8 reductions of the two thumbnails
correlate at least MIN_CORRELATION (cheap: it drops most candidates) and
the thumbnails, aligned, show the same picture (alignment.py: the test
that tells distinct handwriting, icons and scans apart). The result is the
pairs themselves: a copy of a copy is not a copy unless it is one itself
(findings are judged pair by pair, copies.py), and `cliques` groups them
for display so that every two members of a group are copies.
"""

from typing import Dict, List, Optional, Sequence

import numpy as np

from components.image_check import alignment
from components.image_check.fingerprint import HASH_BITS, THUMB

NEAR_BITS = 20  # at most this many of 64 bits apart, and
MIN_CORRELATION = 0.88  # 8x8 thumbnails at least this alike: a candidate
TABLES, KEY_BITS = 48, 12
BUCKET_CAP = 8
_SEED = 20261128  # the tables' bit positions: the same in every run and worker


def key_positions() -> np.ndarray:
  """[TABLES, KEY_BITS] bit positions, fixed."""
  rng = np.random.default_rng(_SEED)
  return np.stack([rng.choice(HASH_BITS, KEY_BITS, replace=False) for _ in range(TABLES)])


def table_keys(hashes: np.ndarray) -> np.ndarray:
  """[TABLES, n] keys of `hashes` (uint64 [n]) in each table."""
  positions = key_positions().astype(np.uint64)
  bits = (hashes[None, None, :] >> positions[:, :, None]) & np.uint64(1)
  weights = (np.uint64(1) << np.arange(KEY_BITS, dtype=np.uint64))[None, :, None]
  return (bits * weights).sum(axis=1)


def candidate_pairs(keys: np.ndarray, rank: np.ndarray) -> np.ndarray:
  """[m, 2] index pairs that share `keys` (one table's, [n]): each member of
  a bucket with the BUCKET_CAP members after it when the bucket is ordered
  by `rank` ([n], the table's order)."""
  order = np.lexsort((rank, keys))
  sorted_keys = keys[order]
  pairs = [np.empty((0, 2), dtype=np.int64)]
  for offset in range(1, BUCKET_CAP + 1):
    same = np.flatnonzero(sorted_keys[offset:] == sorted_keys[:-offset])
    pairs.append(np.stack([order[same], order[same + offset]], 1))
  return np.concatenate(pairs)


def table_ranks(n: int) -> np.ndarray:
  """[TABLES, n] each table's order of the images within a bucket: fixed
  (the same in every run), and independent between tables."""
  rng = np.random.default_rng(_SEED + 1)
  return np.stack([rng.permutation(n) for _ in range(TABLES)])


def popcount(values: np.ndarray) -> np.ndarray:
  """Set bits of each uint64."""
  as_bytes = values.astype(np.uint64).view(np.uint8).reshape(-1, 8)
  return np.unpackbits(as_bytes, axis=1).sum(axis=1)


def near_pairs(hashes: Sequence[int], thumbs: Sequence[bytes],
               comparable: Optional[Sequence[bool]] = None) -> np.ndarray:
  """[m, 2] index pairs (i < j, each once) of near copies among distinct
  pictures (see the module). Images not `comparable` (too small for a
  perceptual hash to tell pictures apart) are in none."""
  n = len(hashes)
  if n < 2:
    return np.empty((0, 2), dtype=np.int64)
  values = np.array(hashes, dtype=np.uint64)
  allowed = np.ones(n, dtype=bool) if comparable is None else np.asarray(comparable, bool)
  found = [np.empty((0, 2), dtype=np.int64)]
  for keys, rank in zip(table_keys(values), table_ranks(n)):
    pairs = candidate_pairs(keys, rank)
    pairs = pairs[popcount(values[pairs[:, 0]] ^ values[pairs[:, 1]]) <= NEAR_BITS]
    pairs = pairs[allowed[pairs[:, 0]] & allowed[pairs[:, 1]]]
    found.append(np.sort(pairs, axis=1))
  pairs = np.unique(np.concatenate(found), axis=0)
  # Thumbnails are read only for the images in a candidate pair.
  involved, at = np.unique(pairs, return_inverse=True)
  at = at.reshape(-1, 2)
  levels = np.stack([np.frombuffer(thumbs[i], dtype=np.uint8) for i in involved.tolist()]
                    ).reshape(-1, THUMB, THUMB) if len(involved) else np.empty((0, THUMB, THUMB))
  coarse = _coarse(levels)
  alike = np.einsum("ij,ij->i", coarse[at[:, 0]], coarse[at[:, 1]]) >= MIN_CORRELATION
  pairs, at = pairs[alike], at[alike]
  return pairs[alignment.same_picture(levels[at[:, 0]], levels[at[:, 1]])]


def _coarse(levels: np.ndarray) -> np.ndarray:
  """[n, 64] the thumbnails' 8x8 reductions, mean 0 and length 1."""
  side = THUMB // 8
  coarse = levels.reshape(-1, 8, side, 8, side).astype(np.float32).mean(axis=(2, 4))
  coarse = coarse.reshape(-1, 64) - coarse.reshape(-1, 64).mean(axis=1, keepdims=True)
  return coarse / np.maximum(np.linalg.norm(coarse, axis=1, keepdims=True), 1e-6)


def cliques(n: int, pairs: np.ndarray) -> List[List[int]]:
  """Groups of two or more of range(n) in which every two members are a
  pair, each sorted, taken greedily in order (an index joins the first
  group whose every member it pairs with); a chain A~B~C with A and C
  apart gives {A, B} and not {A, B, C}."""
  near: Dict[int, set] = {}
  for i, j in pairs.tolist():
    near.setdefault(i, set()).add(j)
    near.setdefault(j, set()).add(i)
  grouped: Dict[int, List[int]] = {}
  out: List[List[int]] = []
  for index in sorted(near):
    if index in grouped:
      continue
    group = [index]
    for other in sorted(near[index]):
      if other not in grouped and all(other in near[m] for m in group[1:]):
        group.append(other)
    for member in group:
      grouped[member] = group
    if len(group) > 1:
      out.append(group)
  return out

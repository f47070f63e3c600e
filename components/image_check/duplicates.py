"""Groups of copies among many images, without comparing every pair.

Exact copies share a digest. Near copies are pHashes at most NEAR_BITS
apart whose thumbnails correlate at least MIN_CORRELATION (fingerprint.py),
found by bit-sampling locality-sensitive hashing (Indyk and Motwani;
Gionis, Indyk and Motwani 1999): each of TABLES tables keys an image by
KEY_BITS bits of its hash at fixed positions, and only images that share a
key somewhere are compared. Two hashes d bits apart share a table's key
with probability (1 - d/64)^KEY_BITS: over 48 tables, 0.98 at d = 12 (a
copy cropped by 4 pixels is 8 bits away at the median, 12 at the 95th
percentile), and 2^-12 a table for unrelated images (d near 32), so the
comparisons grow with the images, not with their pairs. Within a bucket,
each member is compared with the BUCKET_CAP members that follow it in an
order of the table's own (a fixed random rank per image and table), so a
bucket that is large all the same (data made of one picture's crops,
bench/photos.py; or n/4096 images a bucket on large data) costs BUCKET_CAP
comparisons a member, and no member is always last: two images far apart
in the data meet in some table as often as two near its start.

The groups are the connected components of the pairs found
(scipy.sparse.csgraph), so a copy of a copy is in the same group.
"""

from typing import Dict, List, Optional, Sequence

import numpy as np

from components.image_check.fingerprint import HASH_BITS

NEAR_BITS = 20  # at most this many of 64 bits apart, and
MIN_CORRELATION = 0.88  # thumbnails at least this alike: a near copy
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


def groups(hashes: Sequence[int], digests: Sequence[str], thumbs: Sequence[bytes],
           comparable: Optional[Sequence[bool]] = None) -> List[List[int]]:
  """Groups of two or more indexes whose images are copies (exact, or near:
  see the module), each sorted, largest first. Images not `comparable` (too
  small for a perceptual hash to tell pictures apart) join exact copies only."""
  from scipy.sparse import coo_matrix
  from scipy.sparse.csgraph import connected_components
  n = len(hashes)
  if n < 2:
    return []
  edges = [_same(digests)]
  values = np.array(hashes, dtype=np.uint64)
  unit = np.frombuffer(b"".join(thumbs), dtype=np.int8).reshape(n, -1).astype(np.float32) / 127
  allowed = np.ones(n, dtype=bool) if comparable is None else np.asarray(comparable, bool)
  for keys, rank in zip(table_keys(values), table_ranks(n)):
    pairs = candidate_pairs(keys, rank)
    pairs = pairs[allowed[pairs[:, 0]] & allowed[pairs[:, 1]]]
    pairs = pairs[popcount(values[pairs[:, 0]] ^ values[pairs[:, 1]]) <= NEAR_BITS]
    alike = np.einsum("ij,ij->i", unit[pairs[:, 0]], unit[pairs[:, 1]]) >= MIN_CORRELATION
    edges.append(pairs[alike])
  found = np.concatenate(edges)
  graph = coo_matrix((np.ones(len(found)), (found[:, 0], found[:, 1])), shape=(n, n))
  _, labels = connected_components(graph, directed=False)
  members: Dict[int, List[int]] = {}
  for index, label in enumerate(labels):
    members.setdefault(int(label), []).append(index)
  return sorted((m for m in members.values() if len(m) > 1), key=lambda m: (-len(m), m[0]))


def _same(values: Sequence[str]) -> np.ndarray:
  """[m, 2] pairs of equal values: each with the first of its value."""
  first: Dict[str, int] = {}
  pairs = []
  for index, value in enumerate(values):
    if value in first:
      pairs.append((first[value], index))
    else:
      first[value] = index
  return np.array(pairs, dtype=np.int64).reshape(-1, 2)

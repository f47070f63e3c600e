"""Whether two pictures are the same picture: the pixel-level test that
confirms a candidate pair of near copies (duplicates.py), after their
pHashes and coarse thumbnails agree.

Each image keeps a gray thumbnail of the whole picture (fingerprint.THUMB
pixels a side). One thumbnail is aligned onto the other by Gauss-Newton
(Lucas and Kanade 1981) over a scale and a shift per axis, within the
picture: that undoes a resize and a small crop, not a move; both are then normalized over the part they share
(mean 0, spread 1, which undoes a brightening) and compared by the root
mean square of their difference. A copy re-encoded, resized, cropped by a
few pixels or brightened stays under SAME_PICTURE_RMS; two distinct
handwritten digits at MNIST's size, whose coarse thumbnails correlate
above 0.99, differ by more (docs/tfrecords.md gives the rates measured on
each family of pictures, and `python -m bench.image_check_bench` measures
them again).

The work is in NumPy, a few hundred pairs at a time: a candidate pair costs
COARSE_STEPS resamplings of a 16x16 reduction and FINE_STEPS of the
thumbnail, the other way round only when one way does not match.
"""

import numpy as np

# Measured (docs/tfrecords.md): planted copies' 90th percentile 0.05 to
# 0.10 (a 4-pixel crop the highest), the closest distinct digits 0.13.
SAME_PICTURE_RMS = 0.115
# Gauss-Newton steps on 16x16 reductions (a quarter of the work), then on
# the thumbnails themselves.
COARSE_STEPS, FINE_STEPS = 4, 1
CHUNK = 512  # pairs aligned at once (about 40 MB of work arrays)
# How far alignment may go: a scale of MIN_SCALE to its inverse, a shift
# of what that leaves; and where it must end: on a window inside the
# picture (a crop, or a resize, which changes nothing in coordinates that
# run from 0 to 1), SLACK allowed for resampling. Not on a move: a shape
# moved on a plain background is another icon (the other way round,
# `same_picture`, finds the original as a crop's window).
MIN_SCALE, SLACK = 0.85, 0.01
# Pairs whose 16x16 reductions differ more than this as they are, are not
# aligned at all: a 4-pixel crop of a 96-pixel picture reaches 0.56 at
# most, the scans' candidates (docs/tfrecords.md) all pass 0.6.
UNALIGNED_MAX = 0.8


def residuals(a: np.ndarray, b: np.ndarray) -> np.ndarray:
  """[n] the difference left between thumbnails `a[i]` and `b[i]` ([n,
  THUMB, THUMB] gray levels) once `a[i]` is aligned onto `b[i]`: the root
  mean square of their normalized difference, 0 for the same picture."""
  out = np.empty(len(a), dtype=np.float32)
  for start in range(0, len(a), CHUNK):
    part = slice(start, start + CHUNK)
    out[part] = _residuals(a[part].astype(np.float32), b[part].astype(np.float32))
  return out


def same_picture(a: np.ndarray, b: np.ndarray) -> np.ndarray:
  """[n] bool: each pair is the same picture, aligned either way (a crop
  of `a` is `b`, or of `b` is `a`)."""
  a, b = a.astype(np.float32), b.astype(np.float32)
  same = np.zeros(len(a), dtype=bool)
  near = np.flatnonzero(_unaligned(a, b) <= UNALIGNED_MAX)
  forward = residuals(a[near], b[near])
  same[near] = forward <= SAME_PICTURE_RMS
  # The other way only where one way nearly showed it: a crop may align
  # better onto its original than the original onto it.
  again = near[(forward > SAME_PICTURE_RMS) & (forward <= 2 * SAME_PICTURE_RMS)]
  same[again] = residuals(b[again], a[again]) <= SAME_PICTURE_RMS
  return same


def _unaligned(a: np.ndarray, b: np.ndarray) -> np.ndarray:
  """[n] the normalized difference of the 16x16 reductions as they are."""
  a_half, b_half = _half(a), _half(b)
  whole = np.ones_like(a_half)
  difference = _normalized(a_half, whole) - _normalized(b_half, whole)
  return np.sqrt((difference ** 2).mean(axis=(1, 2)))


def _half(a: np.ndarray) -> np.ndarray:
  half = a.shape[-1] // 2
  return a.reshape(-1, half, 2, half, 2).mean(axis=(2, 4))


def _residuals(a: np.ndarray, b: np.ndarray) -> np.ndarray:
  params = np.tile(np.array([1.0, 1.0, 0.0, 0.0], np.float32), (len(a), 1))  # sx, sy, tx, ty
  a_half, b_half = _half(a), _half(b)
  for _ in range(COARSE_STEPS):
    params = _step(a_half, b_half, params)
  for _ in range(FINE_STEPS):
    params = _step(a, b, params)
  warped, inside = _warp(a, params)
  difference = (_normalized(warped, inside) - _normalized(b, inside)) * inside
  shared = inside.sum(axis=(1, 2))
  rms = np.sqrt((difference ** 2).sum(axis=(1, 2)) / np.maximum(shared, 1))
  # The best alignment must be a crop or a resize of one picture or the
  # other, not a move (clamping the steps to that instead stalls them).
  scale, shift = params[:, :2], params[:, 2:]
  crop = _window(scale, shift) | _window(1 / scale, -shift / scale)
  return np.where(crop, rms, np.inf).astype(np.float32)


def _window(scale: np.ndarray, shift: np.ndarray) -> np.ndarray:
  """[n] bool: x = scale u + shift maps [0, 1] into [0, 1] on both axes,
  but for SLACK."""
  return ((shift >= -SLACK) & (shift + scale <= 1 + SLACK)).all(axis=1)


def _step(a: np.ndarray, b: np.ndarray, params: np.ndarray) -> np.ndarray:
  """One Gauss-Newton step of `params` aligning `a` onto `b`."""
  size = a.shape[-1]
  u, v = _grid(size)
  warped, inside = _warp(a, params)
  warped_z, b_z = _normalized(warped, inside), _normalized(b, inside)
  grad_y, grad_x = np.gradient(warped_z, axis=(1, 2))
  grad_x *= size / params[:, 0, None, None]
  grad_y *= size / params[:, 1, None, None]
  jacobian = (np.stack([grad_x * u, grad_y * v, grad_x, grad_y], -1)
              * inside[..., None]).reshape(len(a), -1, 4)
  hessian = np.matmul(jacobian.transpose(0, 2, 1), jacobian) + 1e-4 * np.eye(4, dtype=np.float32)
  gradient = np.matmul(jacobian.transpose(0, 2, 1),
                       ((warped_z - b_z) * inside).reshape(len(a), -1, 1))
  params = params - np.linalg.solve(hessian, gradient)[..., 0]
  params[:, :2] = np.clip(params[:, :2], MIN_SCALE, 2 - MIN_SCALE)
  params[:, 2:] = np.clip(params[:, 2:], MIN_SCALE - 1, 1 - MIN_SCALE)
  return params


def _grid(size: int):
  """The pixel centers of a size x size picture, x (columns) and y (rows),
  in [0, 1]."""
  centers = (np.arange(size, dtype=np.float32) + 0.5) / size
  return np.meshgrid(centers, centers)


def _warp(a: np.ndarray, params: np.ndarray):
  """`a` resampled (bilinear) at x = sx u + tx, y = sy v + ty for each of
  its pixel centers (u, v); and where that falls inside `a`, as 0/1. The
  map is one per axis, so the resampling is two matrix products, rows then
  columns."""
  rows, rows_inside = _axis(params[:, 1], params[:, 3], a.shape[-1])
  columns, columns_inside = _axis(params[:, 0], params[:, 2], a.shape[-1])
  warped = np.matmul(np.matmul(rows, a), columns.transpose(0, 2, 1))
  return warped, rows_inside[:, :, None] * columns_inside[:, None, :]


def _axis(scale: np.ndarray, shift: np.ndarray, size: int):
  """[n, size, size] the bilinear weights that resample one axis at
  scale u + shift, and [n, size] where that falls inside it, as 0/1."""
  centers = (np.arange(size, dtype=np.float32) + 0.5) / size
  at = (scale[:, None] * centers + shift[:, None]) * size - 0.5
  inside = ((at > -0.5) & (at < size - 0.5)).astype(np.float32)
  at = np.clip(at, 0, size - 1.001)
  below = np.floor(at)
  above = at - below
  pixels = np.arange(size, dtype=np.float32)
  weights = ((pixels == below[..., None]) * (1 - above)[..., None]
             + (pixels == below[..., None] + 1) * above[..., None])
  return weights.astype(np.float32), inside


def _normalized(values: np.ndarray, inside: np.ndarray) -> np.ndarray:
  """Mean 0 and spread 1 over the pixels `inside`; a flat picture stays 0."""
  count = np.maximum(inside.sum(axis=(1, 2), keepdims=True), 1)
  mean = (values * inside).sum(axis=(1, 2), keepdims=True) / count
  spread = np.sqrt((((values - mean) * inside) ** 2).sum(axis=(1, 2), keepdims=True) / count)
  return (values - mean) / np.where(spread > 1e-3, spread, 1.0) * inside

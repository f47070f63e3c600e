"""How big the input pipeline's blocks are, and whether a dataset's parsed
records fit the cache's budget: arithmetic on the declaration, and one
bounded pass over the records."""

import logging

import tensorflow as tf

from dataset.declaration import Declaration

MAX_PARSE_BLOCK = 4096
# Parse blocks of large images stay this small, so a prefetched block of
# decoded pixels does not hold hundreds of MB.
PARSE_BLOCK_BYTES = 16 << 20


def example_bytes(decl: Declaration, encoded_images: bool = True) -> int:
  """Bytes one parsed example holds in memory (the model's inputs and label).

  With encoded_images=False, PNG/JPEG images count as nothing: they are
  held as their bytes until after the cache.
  """
  size = 8
  for f in decl.features:
    if f.kind == "image":
      if f.image.encoding == "raw":
        size += f.image.raw_num_bytes
      elif encoded_images:
        size += f.image.height * f.image.width * f.image.channels  # uint8 pixels
    elif f.kind == "numeric":
      size += 4 * f.length
    elif f.kind == "categorical":
      size += 8
    else:
      size += 8 * f.max_length
  return size


def parse_block(decl: Declaration) -> int:
  return max(1, min(MAX_PARSE_BLOCK, PARSE_BLOCK_BYTES // example_bytes(decl)))


def fits_in_memory(blocks: tf.data.Dataset, decl: Declaration, budget_mb: int) -> bool:
  """Whether the parsed records of `blocks` (blocks of serialized records,
  as the input pipeline reads them) fit in `budget_mb`.

  A record is counted at the larger of its serialized size and its parsed
  size, and reading stops once the budget is exceeded, so a large dataset
  costs no more than reading a budget's worth of records.
  """
  budget = budget_mb << 20
  parsed = example_bytes(decl, encoded_images=False)
  sizes = blocks.map(
      lambda block: tf.reduce_sum(tf.maximum(
          tf.cast(tf.strings.length(block), tf.int64), parsed)))
  totals = sizes.scan(tf.constant(0, tf.int64), lambda acc, n: (acc + n, acc + n))
  over = next(iter(totals.filter(lambda total: total > budget).take(1)), None)
  logging.info("input pipeline: %s the parsed training data in memory "
               "(budget %d MB)", "not caching" if over is not None else "caching",
               budget_mb)
  return over is None

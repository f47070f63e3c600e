"""The Trainer's input pipeline and export on real transformed digits."""

import collections
import dataclasses

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform as tft

from dataset.convert.rows import serialize
from dataset.training import TrainingConfig
from trainer import export, input_pipeline, input_sizing, model, run

CONFIG = TrainingConfig(batch_size=16, shuffle_buffer=64, learning_rate=0.01)


@pytest.fixture(scope="module")
def parts(transformed):
  output = tft.TFTransformOutput(transformed["transform_dir"])
  return transformed["decl"], output, output.transformed_feature_spec()


@pytest.fixture(scope="module")
def sharded(transformed, tmp_path_factory):
  """The 64 transformed records split over 3 uncompressed files, unevenly."""
  records = [r.numpy() for r in tf.data.TFRecordDataset(
      tf.io.gfile.glob(transformed["files"][0]), "GZIP")]
  folder = tmp_path_factory.mktemp("sharded")
  for i, part in enumerate((records[:5], records[5:40], records[40:])):
    with tf.io.TFRecordWriter(str(folder / f"part-{i}")) as w:
      for r in part:
        w.write(r)
  return [str(folder / "part-*")]


def _keys(x, y):
  """A batch's examples as hashable tuples: every feature's values and the
  label. Sliced from numpy arrays: a tensor slice per example per feature
  cost about 1.5 s of CPU per 640 examples."""
  arrays = [(k, v.numpy()) for k, v in sorted(x.items())]
  return [tuple((k, a[i].tobytes()) for k, a in arrays) + (int(label),)
          for i, label in enumerate(y.numpy())]


def _examples(batches):
  return collections.Counter(key for x, y in batches for key in _keys(x, y))


def test_one_eval_pass_yields_every_record_once_aligned_as_the_tutorial_loop_does(
    parts, sharded):
  decl, _, spec = parts
  ours = list(input_pipeline.make_dataset(sharded, spec, decl, CONFIG, False,
                                          compression="NONE"))
  assert [len(y) for _, y in ours] == [16, 16, 16, 16]

  def tutorial(serialized):
    features = tf.io.parse_single_example(serialized, spec)
    label = features.pop("label")
    image = tf.io.decode_png(features["image"], channels=1)
    return dict(features, image=image), label

  files = tf.io.gfile.glob(sharded[0])
  loop = list(tf.data.TFRecordDataset(files).map(tutorial).batch(1))
  assert _examples(ours) == _examples(loop)
  assert sum(_examples(ours).values()) == 64


def test_eval_batches_hold_uint8_pixels_and_the_transformed_features(transformed, parts):
  decl, _, spec = parts
  x, y = next(iter(input_pipeline.make_dataset(transformed["files"], spec, decl,
                                               CONFIG, training=False)))
  assert x["image"].shape == (16, 8, 8, 1) and x["image"].dtype == tf.uint8
  assert x["ink"].shape == (16, 1) and x["row_ink"].shape == (16, 8)
  assert x["shape"].shape == (16,) and y.dtype == tf.int64
  assert "label" not in x


def test_eval_order_is_the_same_on_every_pass(parts, sharded):
  decl, _, spec = parts
  passes = [[y.numpy().tolist() for _, y in input_pipeline.make_dataset(
      sharded, spec, decl, CONFIG, False, compression="NONE")] for _ in range(2)]
  assert passes[0] == passes[1]


@pytest.mark.parametrize("cache_mb", [0, 64])
def test_training_repeats_reshuffles_each_pass_and_keeps_full_batches(
    parts, sharded, cache_mb):
  decl, _, spec = parts
  # In order, so that passes stay apart in the output: the fast order may
  # let a batch of the next pass overtake the last of this one.
  config = dataclasses.replace(CONFIG, cache_mb=cache_mb, deterministic=True)
  ds = input_pipeline.make_dataset(sharded, spec, decl, config, True,
                                   compression="NONE")
  batches = list(ds.take(12))  # 192 examples: 3 passes
  assert all(len(y) == 16 for _, y in batches)
  first, second = _examples(batches[:4]), _examples(batches[4:8])
  # Each pass holds every record once, features and label together...
  assert first == second and sum(first.values()) == 64
  # ... in a new order.
  order = [[key for x, y in part for key in _keys(x, y)]
           for part in (batches[:4], batches[4:8])]
  assert order[0] != order[1]


def test_fast_training_order_still_reads_every_record_equally_often(parts, sharded):
  decl, _, spec = parts
  ds = input_pipeline.make_dataset(sharded, spec, decl, CONFIG, True,
                                   compression="NONE")
  counts = _examples(ds.take(40))  # 640 examples: 10 passes
  assert len(counts) == 64 and all(9 <= n <= 11 for n in counts.values()), counts


def test_deterministic_training_order_repeats_across_runs(parts, sharded):
  decl, _, spec = parts
  config = dataclasses.replace(CONFIG, deterministic=True)
  runs = [[y.numpy().tolist() for _, y in input_pipeline.make_dataset(
      sharded, spec, decl, config, True, compression="NONE").take(8)]
      for _ in range(2)]
  assert runs[0] == runs[1]


def test_parsed_data_is_cached_only_when_it_fits_the_budget(parts, sharded):
  decl, _, _ = parts
  files = input_pipeline.list_files(sharded)
  assert input_sizing.fits_in_memory(input_pipeline.read(files, "NONE", False, False), decl, 1)
  # Declared as raw pixels, each record parses to 160 kB: 64 x 160 kB > 8 MB.
  big = dataclasses.replace(decl, features=tuple(
      dataclasses.replace(f, image=dataclasses.replace(
          f.image, encoding="raw", height=400, width=400))
      if f.kind == "image" else f for f in decl.features))
  assert not input_sizing.fits_in_memory(input_pipeline.read(files, "NONE", False, False), big, 8)
  assert input_sizing.fits_in_memory(input_pipeline.read(files, "NONE", False, False), big, 16)


def test_raw_records_through_the_transform_graph_match_transformed_records(
    transformed, parts):
  # The Trainer's process set-up before it traces this pipeline (run.train):
  # without it AutoGraph converts tf.Transform's own code (17 s here, not 4).
  model.skip_autograph_for_libraries()
  decl, output, spec = parts
  raw_files = [decl.data.root + "/*/*"]
  applied = input_pipeline.make_dataset(
      raw_files, output.raw_feature_spec(), decl, CONFIG, False,
      transform=output.transform_features_layer())
  materialized = input_pipeline.make_dataset(transformed["files"], spec, decl,
                                             CONFIG, False)

  def rounded(batches):  # z-scores computed in two graphs: float noise
    return _examples([({k: tf.round(v * 1e4) if v.dtype == tf.float32 else v
                        for k, v in x.items()}, y) for x, y in batches])
  assert rounded(applied) == rounded(materialized)


def test_no_matching_files_is_an_error_naming_the_pattern(parts, tmp_path):
  decl, _, spec = parts
  with pytest.raises(FileNotFoundError, match="nothing-here"):
    input_pipeline.make_dataset([str(tmp_path / "nothing-here*")], spec, decl,
                                CONFIG, False)


AUGMENTING = dataclasses.replace(CONFIG, flip_left_right=True, max_crop_fraction=0.2)


@pytest.fixture(scope="module")
def exported(transformed, parts, tmp_path_factory):
  """A model trained for 5 steps with augmentation, and its exported
  `serving_examples`: the serving tests below share one export."""
  decl, output, spec = parts
  m = model.build_model(decl, run.vocab_sizes(decl), AUGMENTING)
  m.fit(input_pipeline.make_dataset(transformed["files"], spec, decl, AUGMENTING, True),
        steps_per_epoch=5, epochs=1, verbose=0)
  path = str(tmp_path_factory.mktemp("exported") / "model")
  export.export_serving_model(m, output, decl, path)
  return m, tf.saved_model.load(path).signatures[export.EXAMPLES_SIGNATURE]


def test_serving_signature_matches_the_training_input_path(transformed, parts, exported):
  decl, _, spec = parts
  m, serve = exported
  examples = tf.constant(serialize(transformed["rows"]))
  served = [serve(examples=examples)[export.OUTPUT_KEY].numpy() for _ in range(3)]
  assert served[0].shape == (64, 10)
  np.testing.assert_allclose(served[0].sum(axis=1), 1.0, atol=1e-5)
  # Augmentation is for training batches only: the same input, the same answer.
  np.testing.assert_array_equal(served[0], served[1])
  np.testing.assert_array_equal(served[0], served[2])

  # The same records through the training input path give the same answers:
  # Transform and image decoding are shared, so they cannot drift apart.
  pipeline_probs = np.concatenate([m(x, training=False).numpy() for x, _ in
                                   input_pipeline.make_dataset(
                                       transformed["files"], spec, decl, AUGMENTING,
                                       False)])

  def by_row(p):
    return p[np.lexsort(np.round(p, 4).T)]
  np.testing.assert_allclose(by_row(pipeline_probs), by_row(served[0]), atol=1e-5)


def test_serving_ignores_the_label_and_needs_no_label(transformed, exported):
  _, serve = exported
  row = dict(transformed["rows"][0])
  with_label = serve(examples=tf.constant(serialize([row])))
  row.pop("label")
  without = serve(examples=tf.constant(serialize([row])))
  np.testing.assert_allclose(with_label[export.OUTPUT_KEY], without[export.OUTPUT_KEY])

"""`tfrecords convert`: every input kind, the output layout, and bad input."""

import glob
import io
import os

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf
from PIL import Image

from commands.tfrecords.main import main
from dataset import check, declaration
from dataset.records import format as tfrecord


def png(size=(12, 10), value=120, mode="L") -> bytes:
  buf = io.BytesIO()
  Image.new(mode, size, value).save(buf, format="PNG")
  return buf.getvalue()


def jpeg(size=(12, 10), value=(200, 10, 10)) -> bytes:
  buf = io.BytesIO()
  Image.new("RGB", size, value).save(buf, format="JPEG")
  return buf.getvalue()


def image_folder(root, per_class=6, make=png, ext=".png"):
  files = {}
  for c, name in enumerate(["cat", "dog", "emu"]):
    os.makedirs(root / name, exist_ok=True)
    for i in range(per_class):
      data = make(value=30 * c + i) if make is png else make()
      (root / name / f"{i}{ext}").write_bytes(data)
      files[f"{name}/{i}{ext}"] = (data, c)
  return files


def examples(pattern):
  """name -> values of every record under the glob, via TensorFlow."""
  out = []
  for path in sorted(glob.glob(pattern)):
    compression = "GZIP" if path.endswith(".gz") else ""
    for record in tf.data.TFRecordDataset(path, compression):
      example = tf.train.Example.FromString(record.numpy())
      # A feature with no value list is a missing value: left out here.
      out.append({k: list(getattr(v, v.WhichOneof("kind")).value)
                  for k, v in example.features.feature.items() if v.WhichOneof("kind")})
  return out


def run(*argv):
  return main(["convert", *map(str, argv)])


def test_image_folder_keeps_encoded_bytes_and_labels_by_sorted_class(tmp_path, capsys):
  files = image_folder(tmp_path / "in")
  out = tmp_path / "out"
  assert run("images", tmp_path / "in", "--output", out, "--workers", 2) == 0
  got = {e["image"][0]: e["label"][0] for e in examples(str(out / "*.tfrecord.gz"))}
  assert got == {data: label for data, label in files.values()}
  decl = declaration.load(str(out / "dataset.yaml"))
  assert decl.label.classes == ("cat", "dog", "emu")
  image = decl.features[0].image
  assert (image.encoding, image.width, image.height, image.channels) == ("png", 12, 10, 1)
  assert check.check_records(decl, records_per_file=100) == 18
  printed = capsys.readouterr()
  assert "wrote 18 examples" in printed.out and "examples/s" in printed.out
  assert "ex/s" in printed.err  # the progress bar


def test_an_image_folder_is_written_in_a_shuffled_order_the_same_each_time(tmp_path):
  """Class after class, a Trainer's shuffle buffer would see one class at a
  time; each shard holds them mixed, and converting again gives the same."""
  image_folder(tmp_path / "in", per_class=20)
  orders = []
  for out in (tmp_path / "a", tmp_path / "b"):
    assert run("images", tmp_path / "in", "--output", out, "--workers", 1) == 0
    orders.append([e["label"][0] for e in examples(str(out / "*.tfrecord.gz"))])
  runs = sum(1 for i in range(1, 60) if orders[0][i] != orders[0][i - 1])
  assert runs > 20, f"expected the 3 classes mixed, found {runs + 1} runs: {orders[0]}"
  assert orders[0] == orders[1]


def test_resize_and_encode_only_when_asked(tmp_path):
  image_folder(tmp_path / "in", per_class=2)
  assert run("images", tmp_path / "in", "--output", tmp_path / "out",
             "--resize", "8x6", "--encode", "jpeg") == 0
  for e in examples(str(tmp_path / "out" / "*.gz")):
    image = Image.open(io.BytesIO(e["image"][0]))
    assert (image.format, image.size) == ("JPEG", (8, 6))


def test_mixed_png_and_jpeg_keep_their_bytes_and_are_declared_auto(tmp_path):
  image_folder(tmp_path / "in", per_class=2)
  (tmp_path / "in" / "cat" / "x.jpg").write_bytes(jpeg(size=(12, 10)))
  assert run("images", tmp_path / "in", "--output", tmp_path / "out") == 0
  decl = declaration.load(str(tmp_path / "out" / "dataset.yaml"))
  assert decl.features[0].image.encoding == "auto"
  formats = sorted(Image.open(io.BytesIO(e["image"][0])).format
                   for e in examples(str(tmp_path / "out" / "*.gz")))
  assert formats == ["JPEG"] + ["PNG"] * (len(formats) - 1)
  assert check.check_records(decl) == len(formats)
  # --encode still makes one format of them
  assert run("images", tmp_path / "in", "--output", tmp_path / "out2", "--encode", "png") == 0
  assert declaration.load(str(tmp_path / "out2" / "dataset.yaml")).features[0].image.encoding == "png"


@pytest.mark.parametrize("name,content,reason", [
    ("notes.txt", b"hello", "not an image file"),
    ("broken.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 20, "not a readable PNG image"),
    ("fake.jpg", b"GIF89a" + b"\x00" * 20, "not a PNG or JPEG image"),
])
def test_bad_image_stops_with_path_or_is_skipped_and_reported(tmp_path, capsys, name,
                                                               content, reason):
  image_folder(tmp_path / "in", per_class=3)
  bad = tmp_path / "in" / "dog" / name
  bad.write_bytes(content)
  assert run("images", tmp_path / "in", "--output", tmp_path / "out") == 2
  err = capsys.readouterr().err
  assert str(bad) in err and reason in err
  assert not (tmp_path / "out").exists()
  assert [p for p in os.listdir(tmp_path) if p.startswith(".convert")] == []

  assert run("images", tmp_path / "in", "--output", tmp_path / "out", "--skip-bad") == 0
  printed = capsys.readouterr().out
  assert "skipped 1 bad item(s)" in printed and str(bad) in printed
  assert len(examples(str(tmp_path / "out" / "*.gz"))) == 9


def _table(n=40):
  rng = np.random.default_rng(0)
  return pd.DataFrame({
      "id": [f"row-{i}" for i in range(n)],
      "age": rng.integers(18, 90, n), "height": rng.normal(170, 10, n),
      "city": rng.choice(["paris", "oslo", "lima"], n),
      "species": rng.choice(["adelie", "gentoo"], n)})


def test_csv_table_becomes_numeric_categorical_and_named_classes(tmp_path):
  df = _table()
  df.to_csv(tmp_path / "t.csv", index=False)
  assert run("table", tmp_path / "t.csv", "--label", "species", "--key", "id",
             "--output", tmp_path / "out", "--eval-percent", 25) == 0
  decl = declaration.load(str(tmp_path / "out" / "dataset.yaml"))
  kinds = {f.name: (f.kind, f.dtype) for f in decl.features}
  assert kinds == {"age": ("numeric", "int"), "height": ("numeric", "float"),
                   "city": ("categorical", "string")}
  assert decl.label.classes == ("adelie", "gentoo")
  assert check.check_records(decl, records_per_file=1000) == 40
  rows = examples(str(tmp_path / "out" / "*" / "*.gz"))
  got = {(r["height"][0], r["city"][0].decode()): r["species"][0] for r in rows}
  expected = {(np.float32(h), c): ["adelie", "gentoo"].index(s)
              for h, c, s in zip(df.height, df.city, df.species)}
  assert got == expected


def test_column_names_a_signature_cannot_take_are_renamed_and_said_once(tmp_path, capsys):
  df = _table().rename(columns={"age": "age (years)", "height": "height/cm",
                                "city": "home city", "species": "penguin-species"})
  df.to_csv(tmp_path / "t.csv", index=False)
  assert run("table", tmp_path / "t.csv", "--label", "penguin-species",
             "--output", tmp_path / "out") == 0
  out = capsys.readouterr().out
  renamed = [line for line in out.splitlines() if line.startswith("renamed")]
  assert renamed == ["renamed 4 column(s) to feature names (an ASCII letter, then ASCII "
                     "letters, digits and '_'; the declaration keeps each as `source:`): "
                     "'penguin-species' -> penguin_species, 'age (years)' -> age_years, "
                     "'height/cm' -> height_cm, 'home city' -> home_city"], out
  decl = declaration.load(str(tmp_path / "out" / "dataset.yaml"))
  assert {f.name: f.source for f in decl.features} == {
      "id": "", "age_years": "age (years)", "height_cm": "height/cm", "home_city": "home city"}
  assert decl.label.name == "penguin_species"
  assert check.check_records(decl, records_per_file=1000) == 40
  keys = {k for r in examples(str(tmp_path / "out" / "*.gz")) for k in r}
  assert keys == {"id", "age_years", "height_cm", "home_city", "penguin_species"}


def test_each_splits_size_is_printed_per_class(tmp_path, capsys):
  """A table's 40 rows in two classes, a quarter to eval: each split's line
  names each class with its count (a class with 3 eval rows is seen at
  once, not after a run)."""
  import re
  _table().to_csv(tmp_path / "t.csv", index=False)
  assert run("table", tmp_path / "t.csv", "--label", "species", "--key", "id",
             "--output", tmp_path / "out", "--eval-percent", 25) == 0
  out = capsys.readouterr().out
  lines = re.findall(r"^  (train|eval): (\d+) examples in \d+ shard\(s\); per class: "
                     r"adelie (\d+), gentoo (\d+)$", out, re.M)
  assert [split for split, *_ in lines] == ["train", "eval"], out
  assert all(int(n) == int(a) + int(g) for _, n, a, g in lines), out
  assert sum(int(n) for _, n, _, _ in lines) == 40, out


def test_a_regression_label_gets_no_per_class_counts(tmp_path, capsys):
  """A float label's values are no classes: the taxi tips printed hundreds."""
  df = _table().assign(tip=np.linspace(0, 9, 40)).drop(columns=["species"])
  df.to_csv(tmp_path / "t.csv", index=False)
  assert run("table", tmp_path / "t.csv", "--label", "tip", "--output", tmp_path / "out",
             "--eval-percent", 25) == 0
  out = capsys.readouterr().out
  assert "  train: " in out and "per class" not in out, out


def test_parquet_with_image_paths_and_sequences(tmp_path):
  (tmp_path / "img").mkdir()
  paths = []
  for i in range(6):
    (tmp_path / "img" / f"{i}.png").write_bytes(png(value=i * 20))
    paths.append(f"img/{i}.png")
  pd.DataFrame({"photo": paths, "label": [0, 1, 2, 0, 1, 2],
                "signal": [[0.5] * (i + 1) for i in range(6)]}).to_parquet(tmp_path / "t.parquet")
  assert run("table", tmp_path / "t.parquet", "--label", "label", "--image-column", "photo",
             "--output", tmp_path / "out") == 0
  decl = declaration.load(str(tmp_path / "out" / "dataset.yaml"))
  features = {f.name: f for f in decl.features}
  assert features["photo"].image.encoding == "png"
  assert (features["signal"].kind, features["signal"].max_length) == ("sequence", 6)
  rows = examples(str(tmp_path / "out" / "*.gz"))
  assert sorted(len(r["signal"]) for r in rows) == [1, 2, 3, 4, 5, 6]
  assert {r["photo"][0] for r in rows} == {(tmp_path / p).read_bytes() for p in paths}


def test_csv_row_with_a_missing_column_stops_or_is_skipped(tmp_path, capsys):
  (tmp_path / "t.csv").write_text("a,b,label\n1,2.5,0\n3,4.5\n5,6.5,1\n")
  assert run("table", tmp_path / "t.csv", "--label", "label", "--output", tmp_path / "o") == 2
  err = capsys.readouterr().err
  assert "t.csv: line 3: expected 3 columns, found 2" in err
  assert run("table", tmp_path / "t.csv", "--label", "label", "--output", tmp_path / "o",
             "--skip-bad") == 0
  out = capsys.readouterr().out
  assert "skipped 1 bad item(s)" in out and "t.csv:3" in out
  assert len(examples(str(tmp_path / "o" / "*.gz"))) == 2


def test_empty_cells_make_an_optional_feature_or_with_strict_name_the_row(tmp_path, capsys):
  (tmp_path / "t.csv").write_text("a,c,label\n1,x,0\n,,1\n3,y,1\n")
  assert run("table", tmp_path / "t.csv", "--label", "label", "--output", tmp_path / "o") == 0
  decl = declaration.load(str(tmp_path / "o" / "dataset.yaml"))
  assert {f.name: f.required for f in decl.features} == {"a": False, "c": False}
  records = examples(str(tmp_path / "o" / "*.gz"))
  assert sorted((r.get("a"), r.get("c")) for r in records if r.get("a")) == [
      ([1], [b"x"]), ([3], [b"y"])]
  assert [r for r in records if "a" not in r] == [{"label": [1]}]
  assert check.check_records(decl) == 3
  assert run("table", tmp_path / "t.csv", "--label", "label", "--output", tmp_path / "s",
             "--strict") == 2
  assert "t.csv: row 1: column 'a' is missing a value" in capsys.readouterr().err
  assert run("table", tmp_path / "t.csv", "--label", "y", "--output", tmp_path / "o") == 2
  assert "no label column 'y'; the columns are a, c, label" in capsys.readouterr().err


def test_arrays_are_stored_as_raw_bytes_with_shape_and_dtype_declared(tmp_path):
  rng = np.random.default_rng(1)
  images = rng.normal(size=(30, 64, 64)).astype(np.float32)
  labels = rng.integers(0, 4, 30)
  np.savez(tmp_path / "a.npz", images=images, labels=labels, size=rng.normal(size=(30, 3)))
  assert run("arrays", tmp_path / "a.npz", "--output", tmp_path / "out") == 0
  decl = declaration.load(str(tmp_path / "out" / "dataset.yaml"))
  image = decl.features[0].image
  assert (image.encoding, image.height, image.width, image.channels, image.raw_dtype) == \
      ("raw", 64, 64, 1, "float32")
  assert {f.name: f.length for f in decl.features[1:]} == {"size": 3}
  assert check.check_records(decl, records_per_file=100) == 30
  got = {e["image"][0]: e["label"][0] for e in examples(str(tmp_path / "out" / "*.gz"))}
  assert got == {img.tobytes(): lab for img, lab in zip(images, labels)}


def test_npy_images_with_separate_labels(tmp_path):
  np.save(tmp_path / "x.npy", np.zeros((5, 28, 28, 1), np.uint8))
  np.save(tmp_path / "y.npy", np.arange(5))
  assert run("arrays", tmp_path / "x.npy", "--labels", tmp_path / "y.npy",
             "--output", tmp_path / "out") == 0
  decl = declaration.load(str(tmp_path / "out" / "dataset.yaml"))
  assert decl.features[0].image.raw_num_bytes == 28 * 28
  assert decl.label.num_classes == 5


def test_arrays_of_mixed_shapes_stop_with_both_files_named(tmp_path, capsys):
  np.savez(tmp_path / "a.npz", images=np.zeros((3, 28, 28), np.uint8), labels=np.zeros(3, int))
  np.savez(tmp_path / "b.npz", images=np.zeros((3, 27, 28), np.uint8), labels=np.zeros(3, int))
  assert run("arrays", tmp_path / "a.npz", tmp_path / "b.npz", "--output", tmp_path / "o") == 2
  err = capsys.readouterr().err
  assert "b.npz: arrays of mixed shapes" in err and "a.npz has (28, 28)" in err
  ragged = np.empty(2, dtype=object)
  ragged[0], ragged[1] = np.zeros((2, 2)), np.zeros((3, 2))
  np.save(tmp_path / "r.npy", ragged, allow_pickle=True)
  np.save(tmp_path / "y.npy", np.zeros(2, int))
  assert run("arrays", tmp_path / "r.npy", "--labels", tmp_path / "y.npy",
             "--output", tmp_path / "o") == 2
  assert "r.npy: arrays of mixed shapes or objects" in capsys.readouterr().err
  assert not (tmp_path / "o").exists()


def test_shards_by_size_with_consistent_names_and_no_leftovers(tmp_path):
  rng = np.random.default_rng(2)
  np.savez(tmp_path / "a.npz", images=rng.integers(0, 255, (400, 32, 32, 3), dtype=np.uint8),
           labels=rng.integers(0, 3, 400))
  assert run("arrays", tmp_path / "a.npz", "--output", tmp_path / "out", "--shard-mb", 0.2,
             "--compression", "NONE", "--prefix", "px", "--workers", 2) == 0
  names = sorted(os.listdir(tmp_path / "out"))
  shards = [n for n in names if n.endswith(".tfrecord")]
  assert len(shards) >= 5 and names == sorted(shards + ["dataset.yaml"])
  assert shards == [f"px-{i:05d}-of-{len(shards):05d}.tfrecord" for i in range(len(shards))]
  assert all(os.path.getsize(tmp_path / "out" / s) < 0.2e6 + 32 * 32 * 3 * 600
             for s in shards)
  assert len(examples(str(tmp_path / "out" / "*.tfrecord"))) == 400
  assert sorted(os.listdir(tmp_path)) == ["a.npz", "out"]


def test_split_is_stable_across_reconversion_and_worker_counts(tmp_path):
  df = _table(200)
  df.to_csv(tmp_path / "t.csv", index=False)
  evals = []
  for i, workers in enumerate((1, 2)):
    out = tmp_path / f"out{i}"
    assert run("table", tmp_path / "t.csv", "--label", "species", "--key", "id",
               "--eval-percent", 30, "--workers", workers, "--output", out) == 0
    evals.append(sorted((r["age"][0], r["height"][0])
                        for r in examples(str(out / "eval" / "*.gz"))))
  assert evals[0] == evals[1]
  assert 30 <= len(evals[0]) <= 90


def test_spans_go_to_span_folders_and_the_latest_span_is_read(tmp_path):
  df = _table(20)
  df.to_csv(tmp_path / "t.csv", index=False)
  for span in (1, 2):
    assert run("table", tmp_path / "t.csv", "--label", "species", "--output",
               tmp_path / "data", "--span", span, "--eval-percent", 20) == 0
  assert sorted(os.listdir(tmp_path / "data")) == ["dataset.yaml", "span-1", "span-2"]
  decl = declaration.load(str(tmp_path / "data" / "dataset.yaml"))
  assert decl.data.splits["train"] == "span-{SPAN}/train/*.tfrecord.gz"
  files = check.data_files(decl)
  assert all("/span-2/" in f for f in files["train"] + files["eval"])


def test_never_writes_into_a_non_empty_output_folder(tmp_path, capsys):
  image_folder(tmp_path / "in", per_class=2)
  (tmp_path / "out").mkdir()
  (tmp_path / "out" / "keep.txt").write_text("mine")
  assert run("images", tmp_path / "in", "--output", tmp_path / "out") == 2
  assert "not empty; convert never overwrites" in capsys.readouterr().err
  assert os.listdir(tmp_path / "out") == ["keep.txt"]


def test_interrupted_convert_leaves_nothing_that_looks_complete(tmp_path, monkeypatch):
  from dataset.convert import images
  image_folder(tmp_path / "in", per_class=700)  # several chunks
  calls = []
  real = images.load_image

  def interrupted(*args, **kwargs):
    calls.append(1)
    if len(calls) == 1000:
      raise KeyboardInterrupt
    return real(*args, **kwargs)

  monkeypatch.setattr(images, "load_image", interrupted)
  with pytest.raises(KeyboardInterrupt):
    run("images", tmp_path / "in", "--output", tmp_path / "out", "--workers", 1)
  assert sorted(os.listdir(tmp_path)) == ["in"]


@pytest.mark.parametrize("command", [["convert"], ["convert", "images"], ["convert", "table"],
                                     ["convert", "arrays"], ["inspect"], ["verify"],
                                     ["schema"]])
def test_every_command_has_help(command, capsys):
  with pytest.raises(SystemExit) as exit_:
    main([*command, "--help"])
  assert exit_.value.code == 0
  assert "usage: tfrecords" in capsys.readouterr().out


def test_records_are_framed_exactly_as_tensorflow_writes_them(tmp_path):
  data = [b"", b"x", os.urandom(1000)]
  path = str(tmp_path / "tf.tfrecord")
  with tf.io.TFRecordWriter(path) as w:
    for d in data:
      w.write(d)
  with open(path, "rb") as f:
    assert f.read() == b"".join(map(tfrecord.frame, data))


def test_a_worker_that_dies_stops_convert_with_nothing_written(tmp_path, monkeypatch, capsys):
  from dataset.convert import images
  image_folder(tmp_path / "in", per_class=400)  # enough chunks for two workers

  def crash(*args, **kwargs):
    os._exit(3)  # as if the worker process were killed

  monkeypatch.setattr(images, "load_image", crash)
  assert run("images", tmp_path / "in", "--output", tmp_path / "out", "--workers", 2) == 2
  assert "a convert worker died (exit code 3)" in capsys.readouterr().err
  assert sorted(os.listdir(tmp_path)) == ["in"]

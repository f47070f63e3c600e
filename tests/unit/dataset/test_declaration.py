"""The dataset declaration: its format, and its check against the records."""

import copy
import os

import pytest

from dataset import check, declaration
from dataset.convert.rows import write_rows
from dataset.training import ConfigError, TrainingConfig
from tests.conftest import (
  DIGITS_SCHEMA,
  DIGITS_YAML,
  digit_rows,
  digits_dataset,
  digits_raw,
  write_declaration,
)

DeclarationError = declaration.DeclarationError


def test_bundled_digits_declaration_loads():
  decl = declaration.load(DIGITS_YAML)
  assert decl.name == "digits"
  assert decl.label.num_classes == 10
  assert [f.kind for f in decl.features] == [
      "image", "numeric", "numeric", "categorical", "sequence"]
  image = decl.of_kind("image")[0].image
  assert (image.encoding, image.height, image.width, image.channels) == ("png", 8, 8, 1)
  assert decl.schema.endswith(os.path.join("dataset", "examples", "digits.pbtxt"))
  assert decl.data.root.endswith(os.path.join("runs", "data", "digits"))


def test_declaration_survives_the_custom_config_round_trip():
  decl = declaration.load(DIGITS_YAML)
  assert declaration.Declaration.from_dict(decl.to_dict()) == decl


def test_raw_image_and_hash_split_declaration(tmp_path):
  raw = digits_raw()
  raw["features"] = {"pixels": {"kind": "image", "encoding": "raw", "height": 64,
                                "width": 64, "channels": 1, "raw_dtype": "float32"}}
  raw["data"] = {"root": "data", "pattern": "*.tfrecord", "compression": "NONE"}
  raw.pop("schema")
  decl = declaration.load(write_declaration(tmp_path, raw))
  assert decl.features[0].image.raw_num_bytes == 64 * 64 * 4
  assert decl.data.hash_buckets == {"train": 4, "eval": 1}
  assert decl.data.root == os.path.join(str(tmp_path), "data")
  assert decl.schema is None


def _mutated(edit):
  raw = copy.deepcopy(digits_raw())
  raw["schema"] = DIGITS_SCHEMA
  edit(raw)
  return raw


FORMAT_ERRORS = [
    ("missing label", lambda r: r.pop("label"), "'label': expected a mapping"),
    ("too few classes", lambda r: r["label"].update(num_classes=1),
     "'label.num_classes': expected an integer >= 2, found 1"),
    ("unknown kind", lambda r: r["features"]["ink"].update(kind="text"),
     "'features.ink.kind': expected one of image, numeric, categorical, sequence, found 'text'"),
    ("unknown encoding", lambda r: r["features"]["image"].update(encoding="gif"),
     "'features.image.encoding': expected one of png, jpeg, auto, raw, found 'gif'"),
    ("image without height", lambda r: r["features"]["image"].pop("height"),
     "'features.image.height': expected an integer, found nothing (the field is missing)"),
    ("bad raw dtype", lambda r: r["features"]["image"].update(
        encoding="raw", raw_dtype="int7"), "'features.image.raw_dtype'"),
    ("int sequence without vocab", lambda r: r["features"]["row_ink"].pop("vocab_size"),
     "'features.row_ink.vocab_size': expected an integer >= 1 for an int sequence"),
    ("string numeric", lambda r: r["features"]["ink"].update(dtype="string"),
     "'features.ink.dtype': expected one of float, int, found 'string'"),
    ("unknown key", lambda r: r["features"]["ink"].update(lenght=3),
     "'features.ink.lenght': did you mean 'length'? expected one of the keys"),
    ("misspelt label key", lambda r: r["label"].update(num_clases=3),
     "'label.num_clases': did you mean 'num_classes'? expected one of the keys name, "
     "num_classes, classes, kind, source, found the unknown key 'num_clases'"),
    ("misspelt kind", lambda r: r["features"]["ink"].update(kind="numerc"),
     "'features.ink.kind': did you mean 'numeric'? expected one of image, numeric"),
    ("a space in a feature's name", lambda r: r["features"].update(
        {"mean radius": r["features"].pop("ink")}),
     "'features.mean radius': expected a name of an ASCII letter, then ASCII letters, "
     "digits and '_', as a serving signature's input must be; rename it, e.g. to "
     "'mean_radius'"),
    ("a slash in a feature's name", lambda r: r["features"].update(
        {"od280/od315": r["features"].pop("ink")}), "e.g. to 'od280_od315'"),
    ("no features", lambda r: r.update(features={}),
     "'features': expected at least one feature"),
    ("feature named like the label", lambda r: r["features"].update(
        label={"kind": "numeric", "dtype": "int"}), "'features.label'"),
    ("splits and pattern", lambda r: r["data"].update(pattern="*"),
     "'data': expected exactly one of 'splits'"),
    ("missing eval split", lambda r: r["data"]["splits"].pop("eval"),
     "'data.splits.eval': expected a string, found nothing (the field is missing)"),
    ("bad compression", lambda r: r["data"].update(compression="ZLIB"),
     "'data.compression': expected one of GZIP, NONE, found 'ZLIB'"),
    ("missing schema file", lambda r: r.update(schema="nowhere.pbtxt"),
     "'schema': expected an existing schema file"),
    ("boolean as int", lambda r: r["features"]["image"].update(width=True),
     "'features.image.width': expected an integer, found True"),
]


@pytest.mark.parametrize("edit,message", [e[1:] for e in FORMAT_ERRORS],
                         ids=[e[0] for e in FORMAT_ERRORS])
def test_invalid_format_names_file_field_expected_and_found(tmp_path, edit, message):
  path = write_declaration(tmp_path, _mutated(edit))
  with pytest.raises(DeclarationError) as error:
    declaration.load(path)
  assert str(error.value).startswith(path + ": field")
  assert message in str(error.value)


def test_unreadable_and_invalid_yaml_name_the_file(tmp_path):
  missing = str(tmp_path / "missing.yaml")
  with pytest.raises(DeclarationError, match="missing.yaml: cannot read"):
    declaration.load(missing)
  bad = tmp_path / "bad.yaml"
  bad.write_text("name: [unclosed\n")
  with pytest.raises(DeclarationError, match="bad.yaml: not valid YAML"):
    declaration.load(str(bad))


def test_check_passes_on_matching_records(digits_decl):
  assert check.check_records(digits_decl) == 20 + 16  # 20 of 48 train, all 16 eval


def _bad_rows(edit, every_row):
  """Eight good digits, then edited: the fourth (record 3), or every one (the
  encoder types a column as a whole, so a wrong type is in every record)."""
  rows = digit_rows(8)
  for row in rows if every_row else rows[3:4]:
    edit(row)
  return rows


DATA_ERRORS = [
    ("feature absent", lambda r: r.pop("brightness"), False,
     "field 'brightness': expected a numeric feature (it is required; declare `required: false` if records may lack it), found no such feature"),
    ("feature misspelt in the records", lambda r: r.update(brightnes=r.pop("brightness")),
     True, "field 'brightness': expected a numeric feature (it is required; declare "
     "`required: false` if records may lack it), found no such feature in the record; "
     "did you mean 'brightnes'? the record's "
     "features are brightnes, image, ink, label, row_ink, shape"),
    ("label absent", lambda r: r.update(digit=r.pop("label")), True,
     "field 'label.name': expected the label 'label' in every record, found no such "
     "feature in the record; the record's features are brightness, digit, image, ink, "
     "row_ink, shape"),
    ("label not an integer", lambda r: r.update(label=[3.0]), True,
     "field 'label': expected one integer class id (int64_list), found float_list"),
    ("label out of range", lambda r: r.update(label=[12]), False,
     "field 'label': expected a class id in [0, 10), found 12"),
    ("image not PNG", lambda r: r.update(image=[b"GIF89a...."]), False,
     "field 'image': expected PNG-encoded bytes, found bytes starting b'GIF89a.."),
    ("numeric too long", lambda r: r.update(ink=[0.1, 0.2]), False,
     "field 'ink': expected 1 value(s), found 2 value(s)"),
    ("sequence id out of vocabulary", lambda r: r.update(row_ink=[3, 9]), False,
     "field 'row_ink': expected ids in [0, 9), found 9"),
    ("wrong type", lambda r: r.update(shape=[1]), True,
     "field 'shape': expected a bytes_list (categorical, string), found a int64_list"),
]


@pytest.mark.parametrize("edit,every_row,message", [e[1:] for e in DATA_ERRORS],
                         ids=[e[0] for e in DATA_ERRORS])
def test_records_that_do_not_match_fail_with_file_record_and_field(
    tmp_path, edit, every_row, message):
  decl = declaration.load(digits_dataset(tmp_path, _bad_rows(edit, every_row)))
  with pytest.raises(DeclarationError) as error:
    check.check_records(decl)
  record = 0 if every_row else 3
  where = os.path.join(str(tmp_path), "data", "digits-00000-of-00001.tfrecord.gz")
  assert f"{where}: record {record}: {message}" in str(error.value)


def test_raw_image_of_the_wrong_size_fails(tmp_path):
  raw = digits_raw()
  raw.pop("schema")
  raw["features"] = {"pixels": {"kind": "image", "encoding": "raw", "height": 28,
                                "width": 28, "channels": 1}}
  raw["data"] = {"root": "data", "pattern": "*", "compression": "NONE"}
  good = {"pixels": [bytes(28 * 28)], "label": [1]}
  bad = {"pixels": [bytes(27 * 28)], "label": [1]}
  write_rows([good, bad], str(tmp_path / "data"), "p", compression="NONE")
  decl = declaration.load(write_declaration(tmp_path, raw))
  with pytest.raises(DeclarationError, match=(
      r"record 1: field 'pixels': expected 784 bytes \(28x28x1 uint8\), found 756 bytes")):
    check.check_records(decl)


def test_compression_that_the_file_names_contradict_is_named(tmp_path):
  path = digits_dataset(tmp_path, digit_rows(4))
  decl = declaration.load(path)
  for name in os.listdir(tmp_path / "data"):
    os.rename(tmp_path / "data" / name, tmp_path / "data" / name.replace(".gz", ""))
  renamed = declaration.Declaration.from_dict(
      {**decl.to_dict(), "data": {**decl.to_dict()["data"], "pattern": "*.tfrecord"}})
  with pytest.raises(DeclarationError, match=(
      r"digits-00000-of-00001.tfrecord: field 'data.compression' is GZIP, so the "
      r"file needs a name ending in .gz")):
    check.check_records(renamed)


def test_wrong_compression_and_missing_files_are_named(tmp_path):
  path = digits_dataset(tmp_path, digit_rows(4))
  raw = declaration.load(path)
  for name in os.listdir(tmp_path / "data"):  # GZIP content, plain names
    os.rename(tmp_path / "data" / name, tmp_path / "data" / name.replace(".gz", ""))
  plain = declaration.Declaration.from_dict(
      {**raw.to_dict(), "data": {**raw.to_dict()["data"], "compression": "NONE",
                                 "pattern": "*"}})
  with pytest.raises(DeclarationError, match="cannot read as a NONE TFRecord file"):
    check.check_records(plain)
  empty = declaration.Declaration.from_dict(
      {**raw.to_dict(), "data": {**raw.to_dict()["data"], "pattern": "*.nothing"}})
  with pytest.raises(DeclarationError, match=r"expected TFRecord files matching .*\*\.nothing, found none"):
    check.check_records(empty)


def test_a_search_may_pick_only_values_training_config_accepts(tmp_path):
  """A tuning space is checked by TrainingConfig itself (dataset/training.py):
  each value out of its range is a line naming the field and the rule, as
  a flag would get; a boolean is not an integer, nor 1 a boolean."""
  raw = digits_raw()
  raw["schema"] = DIGITS_SCHEMA
  raw["tuning"] = {"space": {"dropout": {"uniform": [0.1, 1.5]},
                             "width": {"choice": [True, 64]},
                             "flip_left_right": {"choice": [1, False]},
                             "learning_rate": {"log_uniform": [1e-4, 1e-2]}}}
  with pytest.raises(DeclarationError) as e:
    declaration.load(write_declaration(tmp_path, raw))
  lines = {line.split("'")[1]: line for line in str(e.value).splitlines()}
  assert sorted(lines) == ["tuning.space.dropout", "tuning.space.flip_left_right",
                           "tuning.space.width"], str(e.value)
  assert lines["tuning.space.dropout"].endswith(
      "expected values dropout accepts (a number in [0, 1)), found 1.5"), lines
  assert lines["tuning.space.width"].endswith("(an integer >= 1), found True"), lines
  assert lines["tuning.space.flip_left_right"].endswith("(true or false), found 1"), lines
  with pytest.raises(ConfigError, match="config field 'width': expected an integer >= 1"):
    TrainingConfig(width=True)


def test_a_tuning_section_reads_back_from_the_pipelines_json(tmp_path):
  raw = digits_raw()
  raw["schema"] = DIGITS_SCHEMA
  raw["tuning"] = {"algorithm": "hyperband", "max_trials": 7, "steps": 60, "every": 3,
                   "space": {"learning_rate": {"log_uniform": ["1e-4", 0.01]},
                             "batch_size": {"choice": [32, 64]}}}
  decl = declaration.load(write_declaration(tmp_path, raw))
  tuning = decl.tuning
  assert (tuning.algorithm, tuning.max_trials, tuning.steps, tuning.every,
          tuning.objective) == ("hyperband", 7, 60, 3, "accuracy")
  space = {d.field: d for d in tuning.space}
  assert space["learning_rate"].values == (1e-4, 0.01), tuning.space
  assert space["batch_size"].distribution == "choice", tuning.space
  assert declaration.Declaration.from_dict(decl.to_dict()).tuning == tuning

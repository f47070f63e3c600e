"""`tfrecords check`: the image check on a dataset's records, before any
pipeline: copies within and across splits (a leak between train and eval),
copies under two labels, dark, light, blank, blurry, tiny and odd-sized
images, and classes far below the others. On data without an image (a
table, sequences), the row check: rows repeated within and across splits,
the same features under two labels, and classes per split, a class with
under 10 eval rows named.

Prints one line per kind found and exits 1 if a kind decided `stop` was
found (a leak, unless told otherwise), 0 otherwise, 2 on bad input.
"""

import sys

from dataset import declaration

SHOWN = 4  # of an example's images, with --examples


def add_parser(commands) -> None:
  p = commands.add_parser("check", help="find copies, leaks, label conflicts and "
                                        "unusable images; exit 1 on a stop",
                          description=__doc__)
  p.add_argument("declaration", help="the dataset declaration (YAML)")
  p.add_argument("--data-root", help="read the records from here instead of the "
                                     "declaration's data.root")
  p.add_argument("--decide", action="append", default=[], metavar="KIND=DECISION",
                 help="stop, warn or ignore for a kind (repeatable), over the "
                      "declaration's image_checks")
  p.add_argument("--examples", action="store_true",
                 help="also list each kind's examples: file and record index")
  p.set_defaults(run=run)


def run(args) -> int:
  import dataclasses
  import os

  from commands.tfrecords.inspect_cmd import expand
  from components.image_check import check
  from dataset import spans
  try:
    decl = declaration.load(args.declaration)
    if args.data_root:
      decl = dataclasses.replace(decl, data=dataclasses.replace(
          decl.data, root=declaration.resolve(".", args.data_root)))
    declared = _decisions(args.decide)
    window = spans.resolve(decl.data, args.declaration)
    files = {split: expand([os.path.join(decl.data.root, glob)])
             for split, glob in window.inputs.items()}
    found = check.check(files, decl, _splits(window.train_splits, files),
                        _splits(window.eval_splits, files), declared)
  except (declaration.DeclarationError, ValueError, FileNotFoundError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  print(f"checked {', '.join(f'{s}: {len(p)} file(s)' for s, p in files.items())}")
  for finding in found:
    print(finding.line())
    if args.examples:
      for example in finding.examples:
        shown = [e.where() if hasattr(e, "where") else str(e) for e in example[:SHOWN]]
        more = f"; and {len(example) - SHOWN} more" if len(example) > SHOWN else ""
        print("  " + "; ".join(shown) + more)
  stops = [f for f in found if f.decision == "stop"]
  if not found:
    print(f"{'image' if decl.of_kind('image') else 'row'} check: nothing found")
  return 1 if stops else 0


def _splits(names, files) -> list:
  """The splits the window trains (or judges) on: its input splits', or,
  for data split by hash, the output splits themselves ("all" is read and
  each record assigned as ImportExampleGen would)."""
  if "all" in files:
    return list(names)
  return [split for split in files if any(split == n or split.startswith(n) for n in names)]


def _decisions(settings) -> dict:
  out = {}
  for setting in settings:
    kind, sep, decision = setting.partition("=")
    if not sep:
      raise ValueError(f"--decide {setting!r}: expected KIND=DECISION")
    out[kind] = decision
  return out

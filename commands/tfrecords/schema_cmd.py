"""`tfrecords schema`: write a starting schema for a declaration, to curate."""

import os
import sys

from dataset import declaration

HEADER = """# Schema of dataset '{name}', written from {path}
# by `tfrecords schema`. Curate it: add value domains (float_domain,
# int_domain, string_domain) that the data must respect, then point the
# declaration's `schema:` field at this file. ExampleValidator then stops a
# run whose data breaks it.
"""


def add_parser(commands) -> None:
  p = commands.add_parser("schema", help="write a starting TFMD schema for a declaration",
                          description=__doc__)
  p.add_argument("declaration", help="the dataset declaration (YAML)")
  p.add_argument("--output", help="the .pbtxt to write; default: standard output")
  p.add_argument("--force", action="store_true", help="replace an existing output file")
  p.set_defaults(run=run)


def run(args) -> int:
  # TensorFlow and the metadata protos load here: the other commands need neither.
  from google.protobuf import text_format

  from dataset import check, schema
  try:
    decl = declaration.load(args.declaration)
  except declaration.DeclarationError as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  text = HEADER.format(name=decl.name, path=args.declaration) + \
      text_format.MessageToString(schema.from_declaration(
          decl, label_names=check.label_stored_as_names(decl)))
  if not args.output:
    sys.stdout.write(text)
    return 0
  if os.path.exists(args.output) and not args.force:
    print(f"error: {args.output} exists; curated schemas are not overwritten "
          "(use --force to replace it)", file=sys.stderr)
    return 2
  tmp = args.output + ".tmp"
  with open(tmp, "w") as f:
    f.write(text)
  os.replace(tmp, args.output)
  print(f"wrote {args.output}")
  return 0

"""Every command the README and the manuals show runs as shown: each one is
parsed by the entry point's own argument parser, so a renamed or removed
flag, a missing required flag or a bad value fails here, naming the page
and the line."""

import argparse
import contextlib
import glob
import io
import os
import re
import shlex

import pytest

from tests.conftest import REPO

PAGES = ["README.md", "DEVELOPERS.md"] + sorted(
    os.path.relpath(p, REPO) for p in glob.glob(os.path.join(REPO, "docs", "*.md")))


def _parsers():
  import local_runner
  from bench import (
    convert_bench,
    declaration_bench,
    e2e_bench,
    image_check_bench,
    input_bench,
    model_ceiling,
    refusal_bench,
    rerun_bench,
    startup_bench,
    transform_bench,
    tuner_bench,
    workers_bench,
  )
  from commands.debug import cli as debug_cli
  from commands.kubeflow import cli as kubeflow_cli
  from commands.retention import cli as retention_cli
  from commands.serving import cli as serving_cli
  from commands.tfrecords import main as tfrecords
  from trainer import worker as trainer_worker
  return {"local_runner.py": local_runner.build_parser,
          "-m commands.kubeflow": kubeflow_cli.parser,
          "-m commands.debug": debug_cli.build_parser,
          "-m commands.serving": serving_cli.build_parser,
          "-m commands.retention": retention_cli.build_parser,
          "tfrecords": tfrecords.build_parser,
          "-m bench.convert_bench": convert_bench.build_parser,
          "-m bench.declaration_bench": declaration_bench.build_parser,
          "-m bench.e2e_bench": e2e_bench.build_parser,
          "-m bench.image_check_bench": image_check_bench.build_parser,
          "-m bench.input_bench": input_bench.build_parser,
          "-m bench.model_ceiling": model_ceiling.build_parser,
          "-m bench.refusal_bench": refusal_bench.build_parser,
          "-m bench.rerun_bench": rerun_bench.build_parser,
          "-m bench.startup_bench": startup_bench.build_parser,
          "-m bench.transform_bench": transform_bench.build_parser,
          "-m bench.tuner_bench": tuner_bench.build_parser,
          "-m bench.workers_bench": workers_bench.build_parser,
          "-m trainer.worker": trainer_worker.build_parser}


def entry(tokens):
  """(entry point, its arguments) of one command, or None for other programs."""
  if tokens and tokens[0].endswith("tfrecords"):
    return "tfrecords", tokens[1:]
  if len(tokens) >= 2 and os.path.basename(tokens[0]).startswith("python"):
    if tokens[1].endswith("local_runner.py"):
      return "local_runner.py", tokens[2:]
    if tokens[1] == "-m" and len(tokens) > 2:
      return f"-m {tokens[2]}", tokens[3:]
  return None


def commands(page: str):
  """(line, tokens, whole) of each command on a page: the lines of its code
  blocks (whole: run as shown), with `\\` continuations joined, and its
  inline code (`...`) that starts a program (flags only: inline text may
  elide, as in `submit --spec ... --host ...`)."""
  found, block, pending = [], None, ""
  for number, line in enumerate(open(os.path.join(REPO, page), encoding="utf-8"), 1):
    if line.startswith("```"):
      block = None if block is not None else line[3:].strip()
      continue
    if block is not None and block != "yaml":
      text = pending + line.strip().removeprefix("$ ")
      if text.endswith("\\"):
        pending = text[:-1] + " "
        continue
      pending = ""
      found += [(number, part, True) for part in text.split("&&")]
    elif block is None:
      found += [(number, code, False) for code in re.findall(r"`([^`]+)`", line)]
  # Output lines in the blocks are not commands (and may not even split); a
  # redirection of a command's output is the shell's, not the command's.
  found = [(n, text.split(" > ")[0], whole) for n, text, whole in found]
  return [(n, shlex.split(text, comments=True), whole) for n, text, whole in found
          if entry(text.split()) and entry(shlex.split(text, comments=True))]


def _subparser(parser: argparse.ArgumentParser, args):
  """The parser a subcommand's flags belong to, after the leading positionals."""
  for arg in args:
    if arg.startswith("-"):
      break
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not actions or arg not in actions[0].choices:
      break
    parser = actions[0].choices[arg]
  return parser


def _alternatives(args):
  """`pause|resume|delete` stands for each; `[--run ID]` for the flag."""
  args = [a.strip("[]") for a in args if a.strip("[]") not in ("...", "")]
  choices = [i for i, a in enumerate(args) if "|" in a]
  if not choices:
    return [args]
  i = choices[0]
  return [alt for choice in args[i].split("|")
          for alt in _alternatives(args[:i] + [choice] + args[i + 1:])]


CASES = [(page, n, tokens, whole) for page in PAGES for n, tokens, whole in commands(page)]


def test_the_pages_show_commands_of_every_entry_point():
  shown = {entry(tokens)[0] for _, _, tokens, _ in CASES}
  assert shown >= {"local_runner.py", "-m commands.kubeflow", "-m commands.debug", "-m commands.serving",
                   "-m commands.retention", "tfrecords"}, shown


@pytest.mark.parametrize("page,line,tokens,whole", CASES,
                         ids=[f"{p}:{n}" for p, n, _, _ in CASES])
def test_a_shown_command_parses(page, line, tokens, whole):
  name, args = entry(tokens)
  parsers = _parsers()
  if name not in parsers:  # python -m pytest, the image's commands
    assert name in ("-m pytest", "-m kubeflow.steps.entrypoint", "-m components.tuner.worker"), \
        f"{page}:{line}: expected a known entry point, found {name}"
    return
  for variant in _alternatives(args):
    parser = parsers[name]()
    if whole:
      errors, shown = io.StringIO(), io.StringIO()
      with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(shown):
        try:
          parser.parse_args(variant)
          exited = None
        except SystemExit as e:
          exited = e.code
      asks_help = "-h" in variant or "--help" in variant
      # --help answers with its usage and exit 0; anything else parses.
      if exited != (0 if asks_help else None) or (asks_help and "usage:" not in shown.getvalue()):
        pytest.fail(f"{page}:{line}: {' '.join(tokens)}\n{errors.getvalue()}")
      continue
    sub = _subparser(parser, variant)
    known = {option for action in sub._actions for option in action.option_strings}
    for arg in variant:
      flag = arg.split("=")[0]
      assert not flag.startswith("--") or flag in known, (
          f"{page}:{line}: {' '.join(tokens)}: expected a flag of {sub.prog} "
          f"({', '.join(sorted(known))}), found {flag}")


def test_a_shown_help_passes_and_a_shown_bad_flag_fails():
  """The check above, on two commands no page shows (yet)."""
  test_a_shown_command_parses("README.md", 1, ["python", "-m", "commands.debug", "--help"], True)
  test_a_shown_command_parses("README.md", 2, ["python", "local_runner.py", "-h"], True)
  with pytest.raises(pytest.fail.Exception, match="README.md:3: python local_runner.py --nope"):
    test_a_shown_command_parses("README.md", 3, ["python", "local_runner.py", "--nope"], True)


def test_setup_flags_shown_exist():
  script = open(os.path.join(REPO, "setup.sh"), encoding="utf-8").read()
  for page in PAGES:
    for line in open(os.path.join(REPO, page), encoding="utf-8"):
      for flag in re.findall(r"setup\.sh (--[\w-]+)", line):
        assert flag in script, f"{page}: setup.sh {flag}: not a flag of setup.sh"

"""A trial worker of a distributed search: `python -m components.tuner.worker SPEC`.

components/tuner/search.py starts it with keras-tuner's environment
(KERASTUNER_ORACLE_IP, _PORT, KERASTUNER_TUNER_ID) and a JSON spec (the
search and the data). It asks the chief's oracle for trials over gRPC, runs
each with the Trainer's code, and reports the score, until told to stop.
"""

import json
import os
import sys

from runtime import startup

if __name__ == "__main__":  # a worker's process; importing this sets nothing up
  startup.start()  # tf-keras, before TensorFlow loads

# isort: split
from components.tuner import search, space
from components.tuner.trial import TrialData
from dataset.tuning import Tuning
from runtime import storage


def main(argv) -> int:
  from keras_tuner.src.distribute.oracle_client import OracleClient
  with open(argv[1]) as f:
    text = f.read()
  # The data and the Transform graph may be on s3://, which TensorFlow
  # reads only once tensorflow-io is loaded (runtime/storage.py).
  storage.enable([text])
  spec = json.loads(text)
  tuning = Tuning.from_dict(spec["tuning"])
  # The local oracle only names the objective; every call goes to the chief.
  client = OracleClient(space.make_oracle(tuning))
  search.work(client, os.environ["KERASTUNER_TUNER_ID"], tuning,
              TrialData.from_dict(spec["data"]), lambda line: print(line, flush=True))
  return 0


if __name__ == "__main__":
  storage.exit(main(sys.argv))  # after s3://, a plain exit aborts (runtime/storage.py)

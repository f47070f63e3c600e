"""`python -m commands.kubeflow doctor`: the user's install, checked against
what a compiled spec needs before a run meets it minutes in.

Runs on the user's machine, with the user's kubeconfig, and reads only:
the namespace's ConfigMap and Secrets, the API server's discovery,
SubjectAccessReviews for the steps' service account, the TrainJob CRD, the
nodes, and, through the steps' keys, a listing of the data root. One line per check
(lines.py); a check the user has no right to make says "not checked" and
why, and never fails by itself.

  needs.py     what the compiled spec (and compile's kfp-launcher.yaml) needs
  cluster.py   reading the cluster, a refusal as "not checked"
  store.py     the launcher's store: the kfp-launcher ConfigMap, the Secrets
  profile.py   a multi-user namespace's allowed prefixes
  training.py  the Trainer's job: its API, its runtime, its placement's
               form, the step's rights
  nodes.py     nodes with the GPUs a step or the workers ask for
  serving.py   KServe's API, and an InferenceService's recorded mode
  data.py      the data root, listed with the steps' keys
  checks.py    all of them, in order
"""

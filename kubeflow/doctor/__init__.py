"""`python -m commands.kubeflow doctor`: the user's install, checked against
what a compiled spec needs before a run meets it minutes in.

Runs on the user's machine, with the user's kubeconfig, and reads only:
the namespace's ConfigMap and Secrets, the API server's discovery, and
SubjectAccessReviews for the steps' service account. One line per check
(lines.py); a check the user has no right to make says "not checked" and
why, and never fails by itself.

  needs.py     what the compiled spec (and compile's kfp-launcher.yaml) needs
  cluster.py   reading the cluster, a refusal as "not checked"
  store.py     the launcher's store: the kfp-launcher ConfigMap, the Secrets
  profile.py   a multi-user namespace's allowed prefixes
  training.py  the Trainer's job: its API, its runtime, the step's rights
  serving.py   KServe's API
  checks.py    all of them, in order
"""

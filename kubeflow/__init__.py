"""Kubeflow Pipelines v2, split by where the code runs, as the backend's own
`backend/src/v2` is: `compile/` on the user's machine at compile time,
`steps/` inside the image (a step's entrypoint and the steps added to the
spec; it never imports compile code), `api/` on the user's machine talking
to the API server. `cli.py` is the command line over all three."""

"""Kubeflow Pipelines v2 and Vertex AI Pipelines, split by where the code
runs, as the backend's own `backend/src/v2` is: `compile/` on the user's
machine at compile time, `api/` on the user's machine talking to the API
server or Vertex AI (neither imports the other), `steps/` inside the image
(a step's entrypoint and the steps added to the spec; it imports neither).
The commands over them are `python -m commands.kubeflow` (commands/kubeflow/)."""

"""Reading ML Metadata: the runs of a pipeline, what each node did, the
outputs it left. Read-only; the runners, `pipeline/` and the debug tools
sit on top of it."""

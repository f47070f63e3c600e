"""Retention: deletes the artifacts of a pipeline's older runs.

    python -m commands.retention --keep 3            # lists what it would delete
    python -m commands.retention --keep 3 --delete   # deletes it
    local_runner.py --keep-runs 3                    # after each run, deletes

The library is here: a local pipeline's retention, planned from its ML
Metadata (plan.py) and carried out (apply.py); a Kubeflow pipeline's,
planned from its runs' folders (folders.py); and the cache epoch it raises
so Kubeflow's cache never hands back what it deleted (cache_epoch.py). What
calls it sits where it runs: the commands (commands/retention/,
`python -m commands.kubeflow retention`), the step `--keep-runs` compiles in
(kubeflow/compile/retention_step.py adds it, kubeflow/steps/retention.py
runs it in the image).

Every run writes new artifacts (examples, transform graphs, models, the
served model's copy for the baseline, evaluations), and nothing deletes
them (kubeflow/pipelines#5509, tensorflow/tfx#2484: TFX's
GarbageCollectionPolicy compiles, but no open-source runner applies it).
This deletes what only runs older than the newest N used, and never:
- anything a kept run used or wrote;
- what a version in the serving dir needs to be explained and rebuilt:
  the Pusher's inputs, and for each, what the step that wrote it read and
  wrote (the model and its examples, transform graph and schema, the
  evaluation and blessing, the serving check, the statistics);
- Transform's analyzer cache of the spans the kept runs read;
- the serving dir itself, which holds the versions and the tuning searches
  (components/tuner/record.py).
Only artifacts under the pipeline root are deleted: an imported schema
lives with the user's files.

ML Metadata marks each deleted artifact DELETED before its files go, so
TFX's cache never hands one back (it takes only LIVE outputs,
`tfx/orchestration/portable/cache_utils.py`; ml-metadata#162); a crash
between the two leaves files, never a record of files that are gone.
"""

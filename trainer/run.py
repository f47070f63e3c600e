"""The Trainer's `run_fn` and a training's order: strategy -> datasets ->
model (warm-started) -> fit -> export, each step a module of its own; here
too a backbone's two phases (`fit_in_phases`) and the hand-off of a job of
several workers to trainer/jobs/."""

import logging
import os
import time
from typing import List, Optional, Sequence

import tensorflow as tf
import tensorflow_transform as tft

from dataset import spans
from dataset.declaration import Declaration
from dataset.training import TrainingConfig
from runtime.progress import console
from runtime.progress import training as progress
from trainer import (
  checkpoints,
  curves,
  distribute,
  export,
  input_pipeline,
  jobs,
  loop,
  model,
  warm_start,
)


def vocab_sizes(decl: Declaration) -> dict:
  """Categorical feature name -> ids the model must embed, from the
  declaration alone (dataset/categories.py)."""
  return {f.name: f.id_count for f in decl.of_kind("categorical")}


def input_spec(tft_output: tft.TFTransformOutput, materialized: bool):
  """(the feature spec the files are read with, the Transform layer the
  input pipeline applies, or None when Transform materialized)."""
  if materialized:
    return tft_output.transformed_feature_spec(), None
  return tft_output.raw_feature_spec(), tft_output.transform_features_layer()


def _datasets(train_files: List[str], eval_files: List[str],
              tft_output: tft.TFTransformOutput, decl: Declaration, config: TrainingConfig,
              strategy: tf.distribute.Strategy, materialized: bool):
  """The distributed train and eval datasets, both repeating."""
  spec, transform = input_spec(tft_output, materialized)

  def dataset(files, training):
    def make(ctx):
      ds = input_pipeline.make_dataset(files, spec, decl, config, training,
                                       transform, ctx)
      # Training data repeats by itself; the eval data is validated on for
      # eval_steps every epoch, so it repeats too.
      return ds if training else ds.repeat()
    return distribute.distribute(strategy, make)

  return dataset(train_files, True), dataset(eval_files, False)


def train(train_files: List[str], eval_files: List[str],
          tft_output: tft.TFTransformOutput, decl: Declaration,
          config: TrainingConfig, strategy: tf.distribute.Strategy,
          materialized: bool = True, log_dir: Optional[str] = None,
          base_model: Optional[str] = None, notes: Sequence[str] = (),
          checkpoint_dir: Optional[str] = None, heartbeat=None) -> tf.keras.Model:
  """Builds the input pipelines and the model, and trains it.

  Args:
    train_files, eval_files: globs of GZIP TFRecords: Transform's output, or
      the raw examples when Transform did not materialize.
    tft_output: the Transform graph.
    decl: the dataset declaration.
    config: how to train.
    strategy: from `distribute.make_strategy`.
    materialized: whether the files hold transformed examples; if not, the
      input pipeline applies the Transform graph.
    log_dir: where the curves and the Trainer's notes go.
    base_model: the served model's SavedModel folder, to warm-start from.
    notes: what the caller decided, for the run's last lines.
    checkpoint_dir: where to checkpoint and resume from, or None (checkpoints.py).
    heartbeat: told of every step (a worker's liveness, distribute.py).

  Returns:
    The trained model.
  """
  distribute.set_precision(config.precision)
  model.skip_autograph_for_libraries()  # before the input pipelines are traced
  train_data, eval_data = _datasets(train_files, eval_files, tft_output, decl, config,
                                    strategy, materialized)
  notes, started = list(notes), time.monotonic()
  with strategy.scope():
    keras_model = model.build_model(decl, vocab_sizes(decl), config)
    notes.append(warm_start.warm_start(keras_model, base_model,
                                       decl.of_kind("categorical")))
  for f, b in _backbones(decl):
    notes.append(f"backbone {b.name} ({f.name}): weights from {b.weights}")
    logging.getLogger("absl").info("%s", notes[-1])  # the step's log on Kubeflow
  log_dir = log_dir if distribute.is_chief(strategy) else None
  resumed: List[int] = []
  if config.loop == "custom":
    resumed = _train_custom(keras_model, strategy, decl, config, train_data, eval_data,
                            log_dir, checkpoint_dir, heartbeat)
  else:
    fit_in_phases(keras_model, strategy, decl, config, train_data, eval_data, log_dir,
                  checkpoint_dir, resumed, heartbeat)
  if resumed:
    notes.append(checkpoints.note(resumed[0], config.train_steps))
    logging.getLogger("absl").info("%s", notes[-1])  # the step's log on Kubeflow
  if log_dir and time.monotonic() - started > 60:
    notes.append(f"training took {console.clock(time.monotonic() - started)}; its curves: "
                 f"tensorboard --logdir {log_dir}")
  warm_start.write_notes(log_dir, notes)
  return keras_model


def _train_custom(keras_model, strategy, decl: Declaration, config: TrainingConfig,
                  train_data, eval_data, log_dir: Optional[str],
                  checkpoint_dir: Optional[str], heartbeat=None) -> List[int]:
  """The custom loop, with its checkpoints and progress line; [the step it
  resumed from], or []."""
  saver = (checkpoints.LoopCheckpoint(keras_model, strategy, checkpoint_dir)
           if checkpoint_dir else None)
  steps = _progress(strategy, config, config.train_steps)
  loop.train_custom(keras_model, strategy, train_data, eval_data, config, log_dir,
                    regression=decl.label.kind == "regression", checkpoint=saver,
                    progress=steps, heartbeat=heartbeat or distribute.NO_HEARTBEAT)
  if steps:
    steps.done()
  return [saver.restored] if saver and saver.restored else []


def _backbones(decl: Declaration):
  """(feature, its backbone) for each image feature with one."""
  return [(f, f.image.backbone) for f in decl.of_kind("image") if f.image.backbone]


def _progress(strategy: tf.distribute.Strategy, config: TrainingConfig,
              total: int) -> Optional[progress.Steps]:
  """The chief's progress line; the other workers keep quiet."""
  if not distribute.is_chief(strategy):
    return None
  return progress.Steps(total, config.batch_size * strategy.num_replicas_in_sync,
                        config.progress_seconds)


def fit_in_phases(keras_model: tf.keras.Model, strategy: tf.distribute.Strategy,
                  decl: Declaration, config: TrainingConfig, train_data, eval_data,
                  log_dir: Optional[str] = None, checkpoint_dir: Optional[str] = None,
                  resumed: Optional[List[int]] = None, heartbeat=None) -> None:
  """`fit`; with a backbone, first frozen for its `frozen_epochs`, then
  fine-tuned at its `fine_tune_learning_rate` for the remaining epochs.
  Each phase checkpoints into a folder of its own under `checkpoint_dir`; a
  phase whose successor has a checkpoint was finished and is skipped. The
  step a phase resumes from is appended to `resumed`."""
  frozen = max((b.frozen_epochs for _, b in _backbones(decl)), default=0)
  phases = [(0, config.epochs, None)]
  if frozen and model.backbones(keras_model):
    fine_tune_rate = (config.fine_tune_learning_rate
                      or min(b.fine_tune_learning_rate for _, b in _backbones(decl)))
    phases = [(0, min(frozen, config.epochs), False),
              (min(frozen, config.epochs), config.epochs, True)]
  folders = ([checkpoint_dir] if len(phases) == 1 else
             [f"{checkpoint_dir}/phase-{i}" for i in range(len(phases))]
             if checkpoint_dir else [None] * len(phases))
  steps = _progress(strategy, config, config.epochs * config.steps_per_epoch)
  for index, (start, end, trainable) in enumerate(phases):
    if start >= end or any(map(checkpoints.has_checkpoint, folders[index + 1:])):
      continue
    if trainable is not None:
      with strategy.scope():
        for backbone in model.backbones(keras_model):
          backbone.trainable = trainable
        model.compile_model(keras_model, decl,
                            fine_tune_rate if trainable else config.learning_rate)
    keras_model.fit(train_data, initial_epoch=start, epochs=end,
                    steps_per_epoch=config.steps_per_epoch,
                    validation_data=eval_data, validation_steps=config.eval_steps,
                    callbacks=checkpoints.fit_callbacks(
                        folders[index], config.checkpoint_every, config.steps_per_epoch,
                        start, resumed if resumed is not None else [])
                    + curves.callbacks(log_dir)
                    + ([progress.FitProgress(steps, config.steps_per_epoch)] if steps else [])
                    + ([heartbeat] if heartbeat else []),
                    verbose=0)


def export_model(keras_model: tf.keras.Model, strategy: tf.distribute.Strategy,
                 tft_output: tft.TFTransformOutput, decl: Declaration,
                 serving_model_dir: str, train_splits: Sequence[str] = (),
                 training_key: str = "") -> None:
  """Exports the trained model, with its weights for the next warm start;
  only the chief's copy is kept."""
  path = distribute.export_dir(strategy, serving_model_dir)
  export.export_serving_model(keras_model, tft_output, decl, path)
  warm_start.save(keras_model, path, train_splits, training_key)
  distribute.discard_export(strategy, path)


def run_fn(fn_args) -> None:
  """TFX Trainer entry point (`fn_args`: TFX's FnArgs): trains here, or with
  --train-workers N launches a job that trains (trainer/jobs/) and waits for it."""
  if fn_args.custom_config.get(jobs.CONFIG_KEY):
    from trainer.jobs import launch  # only a launching Trainer needs it
    launch.launch(fn_args)
  else:
    train_here(fn_args)


def train_here(fn_args) -> None:
  """Trains in this process: alone, or as one worker of a job (`fn_args`:
  TFX's FnArgs, or a worker's namespace of its fields: trainer/jobs/inputs.py).

  `fn_args.custom_config` holds `declaration` (a `Declaration.contract()`),
  `training` (a `TrainingConfig.to_dict()`) and `materialized` (whether
  Transform wrote transformed examples) and `checkpoints` (the folder under
  which checkpoints are kept by training key); `fn_args.hyperparameters`, with
  tuning, the Tuner's best values, which override `training`.
  """
  decl = Declaration.from_dict(fn_args.custom_config["declaration"])
  config = TrainingConfig.from_dict(fn_args.custom_config["training"])
  notes = []
  if fn_args.hyperparameters:  # the Tuner's best settings (keras-tuner's config)
    values = fn_args.hyperparameters["values"]
    config = config.with_values(values)
    notes.append("tuned settings: " + ", ".join(
        f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in sorted(values.items())))
    logging.getLogger("absl").info("%s", notes[-1])  # the step's log on Kubeflow
  # train_args carries the steps: on Kubeflow a run-time parameter.
  config = config.with_train_steps(fn_args.train_steps or config.train_steps)
  distribute.require_gpus(config.gpus)
  tft_output = tft.TFTransformOutput(fn_args.transform_output)
  # The engines running a job's workers describe the cluster here (trainer/jobs/).
  strategy = distribute.make_strategy(os.environ.get("TF_CONFIG"))
  heartbeat = distribute.Heartbeat(os.environ.get(jobs.HEARTBEAT_ENV))  # set by the engine
  key = warm_start.key_for(fn_args.base_model)
  saved = checkpoints.folder(fn_args.custom_config.get(checkpoints.CONFIG_KEY, ""), key,
                             fn_args.model_run_dir)
  keras_model = train(fn_args.train_files, fn_args.eval_files, tft_output, decl,
                      config, strategy,
                      fn_args.custom_config.get("materialized", True),
                      log_dir=fn_args.model_run_dir, base_model=fn_args.base_model,
                      notes=notes, checkpoint_dir=saved, heartbeat=heartbeat)
  heartbeat.stop()  # the export's collectives take longer than a step
  export_model(keras_model, strategy, tft_output, decl, fn_args.serving_model_dir,
               [spans.split_of(p) for p in fn_args.train_files], key)
  checkpoints.discard(saved, strategy)

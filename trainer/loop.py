"""A custom training loop: GradientTape under the distribution strategy.

For users who need their own step (several losses, gradient surgery, odd
schedules). It trains the same compiled model on the same input pipeline,
under the same strategy, as `fit` does, and its result is exported the same
way; `TrainingConfig.loop` chooses it. Each replica averages its loss over
the *global* batch, so the gradients summed across replicas are the mean.
"""

from typing import Dict, List, Optional

import tensorflow as tf

from dataset.training import TrainingConfig
from runtime.progress.training import Steps
from trainer import curves
from trainer import model as model_lib
from trainer.checkpoints import LoopCheckpoint
from trainer.distribute import NO_HEARTBEAT, Heartbeat

keras = tf.keras


def _loss_and_metrics(regression: bool):
  """The per-example loss, and a train and an eval instance of the metric,
  as `model.compile_model` compiles them."""
  loss = (keras.losses.MeanSquaredError if regression
          else keras.losses.SparseCategoricalCrossentropy)
  kind = "regression" if regression else "classes"
  return (loss(reduction=keras.losses.Reduction.NONE),
          model_lib.training_metrics(kind)[0], model_lib.training_metrics(kind)[0])


def _steps(model: keras.Model, strategy: tf.distribute.Strategy, loss_fn,
           train_metric, eval_metric, global_batch: int):
  """The distributed train step (returns the loss) and eval step."""
  optimizer = model.optimizer
  scaled = isinstance(optimizer, keras.mixed_precision.LossScaleOptimizer)

  def replica_step(x, y):
    with tf.GradientTape() as tape:
      probabilities = model(x, training=True)
      loss = tf.nn.compute_average_loss(loss_fn(y, probabilities),
                                        global_batch_size=global_batch)
      if model.losses:
        loss += tf.nn.scale_regularization_loss(tf.add_n(model.losses))
      target = optimizer.get_scaled_loss(loss) if scaled else loss
    grads = tape.gradient(target, model.trainable_variables)
    if scaled:
      grads = optimizer.get_unscaled_gradients(grads)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    train_metric.update_state(y, probabilities)
    return loss

  @tf.function
  def train_step(iterator):
    losses = strategy.run(replica_step, args=next(iterator))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

  @tf.function
  def eval_step(iterator):
    def replica(x, y):
      eval_metric.update_state(y, model(x, training=False))
    strategy.run(replica, args=next(iterator))

  return train_step, eval_step


def _evaluate(eval_step, iterator, steps: int, heartbeat: Heartbeat) -> None:
  for _ in range(steps):
    eval_step(iterator)
    heartbeat.beat()


def train_custom(model: keras.Model, strategy: tf.distribute.Strategy,
                 train, evaluation, config: TrainingConfig,
                 log_dir: Optional[str] = None, regression: bool = False,
                 checkpoint: Optional[LoopCheckpoint] = None,
                 progress: Optional[Steps] = None,
                 heartbeat: Heartbeat = NO_HEARTBEAT) -> Dict[str, List[float]]:
  """Trains `model` for config.train_steps steps, from the checkpoint's if any.

  Args:
    model: compiled under `strategy.scope()` (its optimizer is used; under
      mixed precision Keras made it a LossScaleOptimizer).
    strategy: the distribution strategy.
    train: the training (distributed) dataset, repeating.
    evaluation: the evaluation (distributed) dataset, repeating.
    config: steps, epochs, eval steps, the per-replica batch size and how
      often to checkpoint.
    log_dir: where to write the per-epoch numbers for TensorBoard, or None.
    regression: a regression label (mean squared error, RMSE) rather than
      classes (cross-entropy, accuracy).
    checkpoint: saved every `checkpoint_every` steps (or at each epoch's
      end) and restored first; None trains without.
    progress: told each step and its loss (runtime/progress/training.py), or None;
      the caller ends it.
    heartbeat: told of each step, a worker's liveness (trainer/distribute.py).

  Returns:
    Per epoch trained here: `loss`, the metric and `val_<metric>`
    (`accuracy` or `rmse`), like `fit`'s history.
  """
  with strategy.scope():
    loss_fn, train_metric, eval_metric = _loss_and_metrics(regression)
  train_step, eval_step = _steps(model, strategy, loss_fn, train_metric, eval_metric,
                                 config.batch_size * strategy.num_replicas_in_sync)
  metric = train_metric.name
  history = {"loss": [], metric: [], f"val_{metric}": []}
  train_it, eval_it = iter(train), iter(evaluation)
  restored = done = checkpoint.restore() if checkpoint else 0
  for epoch in range(config.epochs):
    end = min((epoch + 1) * config.steps_per_epoch, config.train_steps)
    if end <= restored:
      continue  # trained before the interruption
    train_metric.reset_state()
    eval_metric.reset_state()
    start, total = done, 0.0
    for step in range(start + 1, end + 1):
      total += (loss := float(train_step(train_it)))
      heartbeat.beat()
      if progress:
        progress.step(step, loss)
      if checkpoint and config.checkpoint_every and step % config.checkpoint_every == 0:
        checkpoint.save(step)
    done = end
    if checkpoint and not config.checkpoint_every:
      checkpoint.save(done)
    _evaluate(eval_step, eval_it, config.eval_steps, heartbeat)
    history["loss"].append(total / max(end - start, 1))
    history[metric].append(float(train_metric.result()))
    history[f"val_{metric}"].append(float(eval_metric.result()))
    curves.write_epoch(log_dir, epoch, {k: v[-1] for k, v in history.items()}, done)
  return history

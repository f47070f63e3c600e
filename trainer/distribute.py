"""Where training runs: the distribution strategy, the precision, the feed.

  cluster in TF_CONFIG     MultiWorkerMirroredStrategy: one replica per
  (2+ tasks)               worker (or per GPU of each), the input sharded per
                           worker, only the chief's export kept. Kubeflow's
                           training operator and Vertex AI set TF_CONFIG.
  several GPUs             MirroredStrategy across all of them.
  one GPU / the CPU        the default strategy; on a GPU, batches are
                           prefetched to the device.

A worker whose process freezes (SIGSTOP, a hung node with its kubelet
alive) no longer touches its heartbeat file (`Heartbeat`); the TFJob's
liveness probe (trainer/jobs/tfjob.py) then has its container restarted.
Its peers need no probe: TF 2.16's coordination service, which
MultiWorkerMirroredStrategy always starts, aborts their collectives about
10 s after a peer stops answering its heartbeats (docs/kubeflow.md).

The per-replica batch is `TrainingConfig.batch_size`, so the global batch
grows with the number of replicas. All of these paths run on the CPU too:
that is how the tests run them, these machines having no GPU.
"""

import ctypes
import json
import os
import shutil
import tempfile
from typing import Callable, Optional, Sequence

import tensorflow as tf

keras = tf.keras


def cluster_tasks(tf_config: Optional[str]) -> int:
  """The number of chief and worker tasks that TF_CONFIG's cluster names."""
  if not tf_config:
    return 0
  cluster = json.loads(tf_config).get("cluster", {})
  return sum(len(cluster.get(job, [])) for job in ("chief", "worker"))


# What TF 2.16 loads to use an NVIDIA GPU (its build: CUDA 12.3, cuDNN 8):
# the driver from the node, the rest from the image (kubeflow/Dockerfile).
GPU_LIBRARIES = ("libcuda.so.1", "libcudart.so.12", "libcublas.so.12", "libcudnn.so.8")


class NoGPU(RuntimeError):
  """The Trainer was given GPUs that TensorFlow cannot use."""


def require_gpus(wanted: int) -> None:
  """Stops when TensorFlow sees fewer than `wanted` GPUs, naming why.

  Without this, TF logs that a library could not be loaded and trains on
  the CPU: on a GPU node with a mismatched image that is hours, silently.

  Raises:
    NoGPU: naming the libraries that do not load, or TF's build when all do.
  """
  if not wanted:
    return
  found = len(tf.config.list_physical_devices("GPU"))
  if found >= wanted:
    return
  missing = []
  for name in GPU_LIBRARIES:
    try:
      ctypes.CDLL(name)
    except OSError:
      missing.append(name)
  info = tf.sysconfig.get_build_info()
  why = (f"cannot load {', '.join(missing)}" if missing else
         "every CUDA library loads, but none matches this TensorFlow build")
  raise NoGPU(f"the Trainer was given {wanted} GPU(s) but TensorFlow sees {found}: "
              f"{why} (TensorFlow {tf.__version__} is built for CUDA "
              f"{info.get('cuda_version', '?')} and cuDNN {info.get('cudnn_version', '?')}; "
              f"build the image with kubeflow/Dockerfile's GPU variant)")


def make_strategy(tf_config: Optional[str]) -> tf.distribute.Strategy:
  """The strategy for this process (see the module docstring).

  Args:
    tf_config: the TF_CONFIG environment variable's value, or None.
  """
  if cluster_tasks(tf_config) > 1:
    # Reads TF_CONFIG itself; collectives run over gRPC between the workers.
    return tf.distribute.MultiWorkerMirroredStrategy()
  if len(tf.config.list_logical_devices("GPU")) > 1:
    return tf.distribute.MirroredStrategy()
  return tf.distribute.get_strategy()


def is_chief(strategy: tf.distribute.Strategy) -> bool:
  """Whether this process writes the model: the chief, or worker 0 without one."""
  resolver = getattr(strategy, "cluster_resolver", None)
  if resolver is None or not resolver.task_type:
    return True
  if resolver.task_type == "chief":
    return True
  jobs = resolver.cluster_spec().jobs
  return resolver.task_type == "worker" and resolver.task_id == 0 and "chief" not in jobs


def export_dir(strategy: tf.distribute.Strategy, serving_model_dir: str) -> str:
  """Where this process saves the model: the real folder on the chief only.

  Every worker must save (saving runs collective ops), but a worker other
  than the chief writes to a temporary folder, deleted by `discard_export`.
  """
  return serving_model_dir if is_chief(strategy) else tempfile.mkdtemp("export")


def discard_export(strategy: tf.distribute.Strategy, path: str) -> None:
  if not is_chief(strategy):
    shutil.rmtree(path, ignore_errors=True)


def precision_policy(choice: str, gpu_capabilities: Sequence) -> str:
  """The Keras dtype policy for a precision choice and the visible GPUs.

  Args:
    choice: `auto`, `float32` or `mixed_float16` (TrainingConfig.precision).
    gpu_capabilities: each visible GPU's CUDA compute capability, (major,
      minor); empty on a machine without GPUs.

  Returns:
    `mixed_float16` when chosen, or for `auto` when every GPU has tensor
    cores (compute capability 7.0 or higher); `float32` otherwise.
  """
  if choice != "auto":
    return choice
  if gpu_capabilities and all(tuple(c) >= (7, 0) for c in gpu_capabilities):
    return "mixed_float16"
  return "float32"


def set_precision(choice: str) -> str:
  """Sets the global Keras dtype policy for the visible GPUs; returns it."""
  capabilities = [
      tf.config.experimental.get_device_details(gpu).get("compute_capability", (0, 0))
      for gpu in tf.config.list_physical_devices("GPU")]
  policy = precision_policy(choice, capabilities)
  keras.mixed_precision.set_global_policy(policy)
  return policy


def feed_device(dataset: tf.data.Dataset, device: Optional[str]) -> tf.data.Dataset:
  """Prefetches batches onto `device`, so a step never waits for a copy."""
  if device is None:
    return dataset
  return dataset.apply(tf.data.experimental.prefetch_to_device(device))


def distribute(strategy: tf.distribute.Strategy,
               dataset_fn: Callable[[Optional[tf.distribute.InputContext]],
                                    tf.data.Dataset]):
  """The dataset as the strategy consumes it.

  Args:
    dataset_fn: builds this input pipeline's dataset; it takes the
      InputContext (shard and per-replica batch), or None on one device.

  Returns:
    A distributed dataset under a multi-replica strategy; otherwise the
    dataset, prefetched onto the GPU when there is one.
  """
  # Two workers of one device each are two replicas, so this covers them.
  if strategy.num_replicas_in_sync > 1:
    return strategy.distribute_datasets_from_function(dataset_fn)
  gpus = tf.config.list_logical_devices("GPU")
  return feed_device(dataset_fn(None), gpus[0].name if gpus else None)


class Heartbeat(keras.callbacks.Callback):
  """Touches a file at every training and evaluation step, and removes it
  when training ends: a liveness probe fails a worker whose file is older
  than its bound (trainer/jobs/tfjob.py `liveness_probe`). No file, no
  verdict: before the first step (the workers wait for each other there)
  and during the export, a probe passes. Without a path it does nothing.
  A Keras callback for `fit`; the custom loop calls `beat` itself."""

  def __init__(self, path: Optional[str] = None):
    super().__init__()
    self.path = path or None
    # A file an earlier container left, where /tmp outlives it (an emptyDir
    # on a hardened pod), would fail this one's probe before its first step.
    self.stop()

  def beat(self, *_) -> None:
    if self.path:
      with open(self.path, "a"):
        os.utime(self.path)

  on_train_batch_end = on_test_batch_end = beat

  def stop(self) -> None:
    if self.path and os.path.exists(self.path):
      os.remove(self.path)


NO_HEARTBEAT = Heartbeat()  # outside a job's worker: beats nothing

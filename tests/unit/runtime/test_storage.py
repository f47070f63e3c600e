"""Which URI schemes a run accepts (runtime/storage.py), and the one-line
refusal of those TensorFlow cannot open."""


import pytest

from runtime import storage


@pytest.mark.parametrize("uri,message", [
    # The store's service by version: SeaweedFS from 2.16, MinIO before.
    ("minio://mlpipeline/v2/artifacts", "found minio://. The install's store speaks S3: "
     "use s3://mlpipeline/v2/artifacts with S3_ENDPOINT set to it, "
     "http://seaweedfs.kubeflow:9000 from Kubeflow Pipelines 2.16, "
     "http://minio-service.kubeflow:9000 before"),
    ("hdfs://nn/data", "expected a folder, gs:// or s3://"),
])
def test_schemes_tensorflow_cannot_open_are_refused_with_what_to_use(uri, message):
  with pytest.raises(storage.StorageError, match="--pipeline-root " + uri) as e:
    storage.check_scheme(uri, "--pipeline-root")
  assert message in str(e.value)


@pytest.mark.parametrize("uri,found", [("/data/x", ""), ("relative/x", ""),
                                       ("gs://b/x", "gs"), ("S3://b/x", "s3")])
def test_folders_gs_and_s3_are_accepted(uri, found):
  assert storage.scheme(uri) == found
  assert storage.check_scheme(uri, "--data-root") is None  # raises for the others



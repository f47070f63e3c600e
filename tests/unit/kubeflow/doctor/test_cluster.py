"""Reading the stand-in cluster as the user: discovery, Secrets' keys,
SubjectAccessReviews, and a refusal as Unreadable."""

import pytest

from kubeflow.doctor.cluster import Reader, Unreadable
from tests.doctor_install import READER, Install


def test_the_reader_sees_what_is_served_and_who_may_do_what(tmp_path, monkeypatch):
  with Install(tmp_path, monkeypatch) as install:
    reader = Reader("team-a")
    assert reader.serves("trainer.kubeflow.org", "v1alpha1", "trainjobs")
    assert not reader.serves("trainer.kubeflow.org", "v1alpha1", "jobsets")
    assert not reader.serves("jobset.x-k8s.io", "v1alpha2", "jobsets")
    assert reader.secret_keys("mlpipeline-minio-artifact") == {"accesskey", "secretkey"}
    assert reader.secret_keys("nothing") is None
    assert reader.configmap("nothing") is None
    assert reader.may("default-editor", "create", "trainer.kubeflow.org", "trainjobs")
    assert reader.may("default-editor", "get", "", "pods/log")
    assert not reader.may("default-editor", "delete", "", "pods")
    assert not reader.may("someone-else", "create", "trainer.kubeflow.org", "trainjobs")
    install.store.forbid("create", "trainjobs")
    assert not reader.may("default-editor", "create", "trainer.kubeflow.org", "trainjobs")


def test_what_the_user_may_not_read_is_unreadable(tmp_path, monkeypatch):
  with Install(tmp_path, monkeypatch, user_rules=READER):
    reader = Reader("team-a")
    assert reader.configmap("kfp-launcher") is None  # may read ConfigMaps: none here
    assert reader.serves("serving.kserve.io", "v1beta1", "inferenceservices")  # anyone may
    with pytest.raises(Unreadable, match="may not get secret x in namespace team-a"):
      reader.secret_keys("x")
    with pytest.raises(Unreadable, match="may not create subjectaccessreviews"):
      reader.may("default-editor", "create", "trainer.kubeflow.org", "trainjobs")

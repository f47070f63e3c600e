"""A STAND-IN for a cloud object store: moto's S3 server on 127.0.0.1.

No S3 bucket or MinIO can be reached from here. moto speaks the S3 protocol
that TensorFlow's s3:// file system (tensorflow-io) and the Kubeflow
launcher's blob library speak, on a port of this machine, and keeps the
objects in memory until it stops. With `auth=True` it checks credentials as
S3 does, and rejects any key it has not issued. With `profiles`, it is a
multi-user install's store: each profile namespace's keys reach only the
prefixes the profile controller allows them (tests/fakes/s3_profiles.py).
"""

import contextlib
import json
import os
import socket
import subprocess
import sys
import time

import requests

KEY, SECRET = "stand-in-key", "stand-in-secret"


def free_port() -> int:
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


def env(endpoint: str) -> dict:
  """What a process needs to reach the server through TensorFlow's s3://."""
  return {"S3_ENDPOINT": endpoint, "AWS_REGION": "us-east-1", "S3_USE_HTTPS": "0",
          "S3_VERIFY_SSL": "0", "AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET}


START_SECONDS = 120


@contextlib.contextmanager
def s3_server(buckets=(), auth: bool = False, profiles=(), log=None):
  """Yields (endpoint URL, a boto3 client with the admin's keys) for a
  fresh server with `buckets`; `profiles` are the profile namespaces whose
  keys (s3_profiles.profile_keys) it knows; `log`, a file for the requests
  it refuses them."""
  import boto3
  port = free_port()
  server_env = dict(os.environ)
  if auth:
    server_env["INITIAL_NO_AUTH_ACTION_COUNT"] = "0"
  command = [os.path.join(os.path.dirname(sys.executable), "moto_server"),
             "-H", "127.0.0.1", "-p", str(port)]
  if profiles:
    command = [sys.executable, os.path.join(os.path.dirname(__file__), "s3_profiles.py"),
               "127.0.0.1", str(port), KEY, json.dumps(sorted(profiles))]
  errors = open(log, "a") if log else subprocess.DEVNULL  # noqa: SIM115  (closed below)
  proc = subprocess.Popen(command, env=server_env, stdout=subprocess.DEVNULL, stderr=errors)
  endpoint = f"http://127.0.0.1:{port}"
  try:
    # Up to START_SECONDS for the first answer: on a busy machine moto's
    # first request (its routes load then) can take seconds to answer, which
    # a 1-second read timeout once took for a dead server (CI, 503fdcd).
    deadline = time.monotonic() + START_SECONDS
    while True:
      try:
        requests.get(endpoint, timeout=10)
        break
      except (requests.ConnectionError, requests.Timeout) as e:
        if proc.poll() is not None or time.monotonic() > deadline:
          raise RuntimeError(f"moto's S3 server on {endpoint}: expected an answer within "
                             f"{START_SECONDS} s, found {type(e).__name__} (server exit "
                             f"status: {proc.poll()})") from None
        time.sleep(0.1)
    client = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=KEY,
                          aws_secret_access_key=SECRET, region_name="us-east-1")
    for bucket in buckets:
      client.create_bucket(Bucket=bucket)
    yield endpoint, client
  finally:
    proc.terminate()
    proc.wait(timeout=30)
    if log:
      errors.close()


def upload_folder(client, folder: str, uri: str) -> None:
  """Copies a local folder's files under an s3:// URI."""
  bucket, _, prefix = uri[len("s3://"):].partition("/")
  for dirpath, _, files in os.walk(folder):
    for name in files:
      path = os.path.join(dirpath, name)
      key = "/".join(filter(None, [prefix, os.path.relpath(path, folder)]))
      client.upload_file(path, bucket, key)


def download(client, uri: str, folder) -> str:
  """Copies everything under an s3:// URI into a local folder."""
  bucket, _, prefix = uri[len("s3://"):].partition("/")
  for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
    for obj in page.get("Contents", []):
      path = os.path.join(str(folder), os.path.relpath(obj["Key"], prefix))
      os.makedirs(os.path.dirname(path), exist_ok=True)
      client.download_file(bucket, obj["Key"], path)
  return str(folder)


def read(client, uri: str) -> str:
  """The text of the one object at an s3:// (or, handed to moto, gs://) URI."""
  bucket, _, key = uri.split("://", 1)[1].partition("/")
  return client.get_object(Bucket=bucket, Key=key)["Body"].read().decode()

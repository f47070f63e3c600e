"""STAND-INS for the Google endpoints around Vertex AI that the real clients
call on their own: the Compute Engine metadata server (google-auth), the
Cloud Storage JSON API for buckets, and Resource Manager's GetProject.

For tests/fakes/vertex_pipelines.py. No Google service can be reached here;
google-auth 2.62, google-cloud-storage 2.19 and google-cloud-resource-manager
1.16 (the lock's) talk to these on 127.0.0.1, pointed there the ways they
honour: GCE_METADATA_HOST/GCE_METADATA_IP (google-auth
`compute_engine/_metadata.py`), STORAGE_EMULATOR_HOST (google-cloud-storage
`_helpers.py`), and for the gRPC one, gRPC's own `grpc_proxy` with the
proxy's CA in GRPC_DEFAULT_SSL_ROOTS_FILE_PATH: Resource Manager's endpoint
is fixed (`cloudresourcemanager.googleapis.com:443`), so an HTTP CONNECT
proxy here tunnels it to a TLS gRPC server holding a certificate for that
name, signed by a CA made for the run. Without it, aiplatform's
`PipelineJob.submit()` spends 40 to 60 s here on the lookup it makes before
every submit (`utils/gcs_utils.py` `_verify_bucket_ownership` line 88 calls
`resource_manager_utils.get_project_number`: gRPC retries an unresolvable
host until its 60 s deadline, then aiplatform logs the bucket as not the
project's and goes on).

What each answers, and nothing more:
- metadata: a VM's project id, its default service account (email, token)
  and universe domain; a request without `Metadata-Flavor: Google` 403s;
- storage: tests/fakes/google_storage.py;
- Resource Manager: GetProject by id or number; any other project is
  PERMISSION_DENIED, as Google answers for a project one may not see.
"""

import datetime
import functools
import http.server
import json
import os
import socket
import threading
import urllib.parse
from concurrent import futures
from typing import Dict, Tuple

import grpc
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from google.cloud.resourcemanager_v3.types import projects

RESOURCE_MANAGER = "cloudresourcemanager.googleapis.com"


class JsonHandler(http.server.BaseHTTPRequestHandler):
  """Google's JSON error shape; quiet."""

  def log_message(self, *args) -> None:
    pass

  def send(self, code: int, body, content_type="application/json", headers=None) -> None:
    data = (body if isinstance(body, str) else json.dumps(body)).encode()
    self.send_response(code)
    self.send_header("Content-Type", content_type)
    for k, v in (headers or {}).items():
      self.send_header(k, v)
    self.send_header("Content-Length", str(len(data)))
    self.end_headers()
    self.wfile.write(data)

  def error(self, code: int, status: str, message: str, details=()) -> None:
    self.send(code, {"error": {"code": code, "message": message, "status": status,
                               **({"details": list(details)} if details else {})}})

  def body(self) -> bytes:
    return self.rfile.read(int(self.headers.get("Content-Length") or 0))


def metadata(handler: JsonHandler, path: str, project: str, email: str, token: str) -> None:
  """The metadata server's answers to what google-auth asks
  (`compute_engine/_metadata.py`: ping, project-id, universe-domain, the
  service account's info and token)."""
  if handler.headers.get("Metadata-Flavor") != "Google":
    return handler.send(403, "missing Metadata-Flavor: Google", "text/plain")
  account = "/computeMetadata/v1/instance/service-accounts/default/"
  answers = {
      "/computeMetadata/v1/project/project-id": project,
      "/computeMetadata/v1/universe/universe-domain": "googleapis.com",
      account: json.dumps({"aliases": ["default"], "email": email,
                           "scopes": ["https://www.googleapis.com/auth/cloud-platform"]}),
      account + "email": email,
      account + "token": json.dumps({"access_token": token, "expires_in": 3599,
                                     "token_type": "Bearer"})}
  flavor = {"Metadata-Flavor": "Google"}
  if path.rstrip("/") in ("", "/computeMetadata/v1") or path in answers:
    body = answers.get(path, "")
    return handler.send(200, body, "application/json" if body.startswith("{") else
                        "application/text", flavor)
  handler.send(404, "not found", "text/plain", flavor)


class MetadataServer:
  """A metadata server of its own (a Vertex step's: the tenant project)."""

  def __init__(self, project: str, email: str, token: str):
    def answer(h):
      return metadata(h, urllib.parse.urlparse(h.path).path, project, email, token)
    handler = type("Metadata", (JsonHandler,), {"do_GET": answer})
    self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    self.server.daemon_threads = True
    threading.Thread(target=self.server.serve_forever, daemon=True).start()
    self.address = f"127.0.0.1:{self.server.server_address[1]}"

  def close(self) -> None:
    self.server.shutdown()
    self.server.server_close()


def _certificates(folder: str) -> Tuple[bytes, bytes]:
  """The CA (written to folder/ca.pem) and Resource Manager's key and
  certificate, signed by it."""
  ca, key, server = _made_once()
  with open(os.path.join(folder, "ca.pem"), "wb") as f:
    f.write(ca)
  return key, server


@functools.lru_cache(maxsize=None)
def _made_once() -> Tuple[bytes, bytes, bytes]:
  """One CA a process: gRPC reads GRPC_DEFAULT_SSL_ROOTS_FILE_PATH once a
  process, so a second stand-in with a CA of its own failed its handshake
  (BAD_SIGNATURE) in a process that had started one before."""
  now = datetime.datetime.now(datetime.timezone.utc)

  def cert(subject, issuer, public_key, signer, **extensions):
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
               .public_key(public_key).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(days=1))
               .not_valid_after(now + datetime.timedelta(days=7)))
    for extension, critical in extensions.values():
      builder = builder.add_extension(extension, critical=critical)
    return builder.sign(signer, hashes.SHA256())
  ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
  ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "stand-in CA")])
  ca = cert(ca_name, ca_name, ca_key.public_key(), ca_key,
            ca=(x509.BasicConstraints(ca=True, path_length=None), True))
  server = cert(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, RESOURCE_MANAGER)]),
                ca_name, key.public_key(), ca_key,
                san=(x509.SubjectAlternativeName([x509.DNSName(RESOURCE_MANAGER)]), False))
  return (ca.public_bytes(serialization.Encoding.PEM),
          key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()),
          server.public_bytes(serialization.Encoding.PEM))


class ResourceManager:
  """GetProject over gRPC, behind an HTTP CONNECT proxy; `env` is what a
  process needs to reach it."""

  def __init__(self, folder: str, project: str, number: str, token: str):
    def get_project(request, context):
      if dict(context.invocation_metadata()).get("authorization") != f"Bearer {token}":
        context.abort(grpc.StatusCode.UNAUTHENTICATED, "Request had invalid authentication "
                      "credentials.")
      if request.name not in (f"projects/{project}", f"projects/{number}"):
        context.abort(grpc.StatusCode.PERMISSION_DENIED, "The caller does not have permission")
      return projects.Project(name=f"projects/{number}", project_id=project,
                              display_name=project, state=projects.Project.State.ACTIVE)
    handler = grpc.method_handlers_generic_handler("google.cloud.resourcemanager.v3.Projects", {
        "GetProject": grpc.unary_unary_rpc_method_handler(
            get_project, request_deserializer=projects.GetProjectRequest.deserialize,
            response_serializer=projects.Project.serialize)})
    self.server = grpc.server(futures.ThreadPoolExecutor(4))
    self.server.add_generic_rpc_handlers((handler,))
    port = self.server.add_secure_port(
        "127.0.0.1:0", grpc.ssl_server_credentials([_certificates(folder)]))
    self.server.start()
    self.proxy = _Proxy({f"{RESOURCE_MANAGER}:443": port})
    self.env = {"grpc_proxy": f"http://127.0.0.1:{self.proxy.port}",
                "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH": os.path.join(folder, "ca.pem")}

  def close(self) -> None:
    self.proxy.close()
    self.server.stop(None)


class _Proxy:
  """An HTTP CONNECT proxy that tunnels the hosts it knows to local ports and
  refuses the others (403), so no other gRPC call hangs on a lookup."""

  def __init__(self, routes: Dict[str, int]):
    self.routes = routes
    self.sock = socket.socket()
    self.sock.bind(("127.0.0.1", 0))
    self.sock.listen(16)
    self.port = self.sock.getsockname()[1]
    threading.Thread(target=self._accept, daemon=True).start()

  def _accept(self) -> None:
    while True:
      try:
        client, _ = self.sock.accept()
      except OSError:  # closed
        return
      threading.Thread(target=self._tunnel, args=(client,), daemon=True).start()

  def _tunnel(self, client: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
      chunk = client.recv(4096)
      if not chunk:
        return client.close()
      data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    target = head.split(b"\r\n")[0].split(b" ")[1].decode()
    if target not in self.routes:
      client.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
      return client.close()
    upstream = socket.create_connection(("127.0.0.1", self.routes[target]))
    client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    if rest:
      upstream.sendall(rest)
    threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()
    _pipe(client, upstream)

  def close(self) -> None:
    self.sock.close()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
  try:
    while True:
      chunk = source.recv(65536)
      if not chunk:
        break
      sink.sendall(chunk)
  except OSError:
    pass
  finally:
    for s in (source, sink):
      try:
        s.shutdown(socket.SHUT_RDWR)
      except OSError:
        pass

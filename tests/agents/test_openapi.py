"""OpenAPI operations as commands, against a small HTTP server the test starts on 127.0.0.1."""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip("httpx")
from scripted_kernel import ScriptedTool  # noqa: E402

SPEC = """
openapi: 3.0.0
info: {title: pets, version: "1"}
paths:
  /pets/{id}:
    get:
      operationId: getPet
      summary: Fetch a pet
      tags: [pets]
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}}
        - {name: verbose, in: query, schema: {type: boolean}}
  /pets:
    post:
      operationId: createPet
      summary: Add a pet
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/NewPet'}
components:
  schemas:
    NewPet:
      type: object
      required: [name]
      properties:
        name: {type: string}
        age: {type: integer, minimum: 0}
"""

PETS = {1: {"id": 1, "name": "Rex", "age": 3}}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _send(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        path, _, query = self.path.partition("?")
        pet_id = int(path.rsplit("/", 1)[1])
        if pet_id not in PETS:
            return self._send(404, {"error": "no such pet"})
        pet = dict(PETS[pet_id])
        if "verbose=true" in query:
            pet["auth"] = self.headers.get("X-Api-Key")
        self._send(200, pet)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        pet = {"id": len(PETS) + 1, **body}
        PETS[pet["id"]] = pet
        self._send(201, pet)


@pytest.fixture(scope="module")
def base_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_operations_become_commands(base_url):
    t = ScriptedTool.builder("pets").openapi(SPEC, base_url, headers={"X-Api-Key": "k1"}).build()
    assert sorted(t.tools) == ["createPet", "getPet"]
    r = t.execute("""getPet --id 1 | jq -r .name
getPet --id 1 --verbose | jq -r .auth
id=$(createPet --name Tom --age 2 | jq .id); getPet --id $id | jq -c '{name, age}'
getPet --id 99 || echo "missing: $?"
createPet --name X --age -1""")
    assert r.stdout == 'Rex\nk1\n{"name":"Tom","age":2}\nmissing: 1\n', r.stderr
    assert "getPet: HTTP 404" in r.stderr
    assert "createPet: --age: -1 is less than the minimum of 0" in r.stderr and r.exit_code == 2

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { api, startTestServer, type TestServer } from "./helpers.js";

const STATE_CHANGING = new Set(["post", "put", "patch", "delete"]);
const EVIL = { origin: "http://evil.example" };

describe("the open loopback (no keys) refuses another site's requests that change something", () => {
  let server: TestServer;
  let routes: { method: string; path: string }[];
  let sessionId: string;
  before(async () => {
    server = await startTestServer({ runs: [{ match: ".", turns: [{ text: "Hello." }] }] });
    // Every state-changing route the server documents, with a real session in its path.
    const created = await api(server, "POST", "/v1/sessions", { body: {} });
    assert.equal(created.status, 201, "control: without an Origin, a local client is the local admin");
    sessionId = created.body.id;
    const doc = (await api(server, "GET", "/openapi.json")).body as { paths: Record<string, Record<string, unknown>> };
    routes = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods)
        .filter((m) => STATE_CHANGING.has(m))
        .map((method) => ({
          method: method.toUpperCase(),
          path: path.replace("{id}", sessionId).replace("{runId}", "run-x").replace("{toolCallId}", "call-x"),
        })),
    );
  });
  after(() => server.close());

  test("every POST and DELETE route answers 403 cross_origin to Origin: http://evil.example, and nothing changes", async () => {
    assert.ok(routes.length >= 8, `found the state-changing routes: ${routes.map((r) => r.path).join(", ")}`);
    for (const { method, path } of routes) {
      const res = await api(server, method, path, {
        headers: EVIL,
        body: method === "DELETE" ? undefined : { input: "hi", messages: [{ role: "user", content: "hi" }] },
      });
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.equal(res.body.error.code, "cross_origin", `${method} ${path}`);
    }
    const listed = await api(server, "GET", "/v1/sessions");
    assert.deepEqual(
      listed.body.data.map((s: { id: string }) => s.id),
      [sessionId],
      "no session was created, and the one there was not deleted",
    );
  });

  test("an Origin of the server itself, or none, is the local admin as before", async () => {
    const own = await api(server, "POST", "/v1/sessions", { headers: { origin: server.url }, body: {} });
    assert.equal(own.status, 201);
    const none = await api(server, "DELETE", `/v1/sessions/${own.body.id}`);
    assert.equal(none.status, 204);
  });

  test("reading stays open to a request with a foreign Origin (the browser keeps the answer from the page: no CORS)", async () => {
    const res = await api(server, "GET", "/v1/sessions", { headers: EVIL });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("access-control-allow-origin"), null);
  });

  test("an opaque Origin (null: a sandboxed frame, a file) is foreign too", async () => {
    const res = await api(server, "POST", "/v1/sessions", { headers: { origin: "null" }, body: {} });
    assert.equal(res.status, 403);
  });
});

import assert from "node:assert/strict";
import { test } from "node:test";
import { RunWatcher } from "../../src/cli/run-watch.js";

/** A terminal stream that records what was written. */
function tty() {
  const written: string[] = [];
  return {
    isTTY: true,
    written,
    write: (text: string, done?: (error?: Error | null) => void) => {
      written.push(text);
      done?.();
      return true;
    },
  };
}

test("the status line steps aside while an approval question is asked, and comes back after", async () => {
  const stdout = tty();
  const stderr = tty();
  const watcher = new RunWatcher("text", stdout, stderr, (t) => t);
  watcher.start();
  watcher.onEvent({ type: "step", step: 1 });
  assert.match(stderr.written.at(-1) ?? "", /step 1/);
  await watcher.aside(async () => {
    assert.equal(stderr.written.at(-1), "\r\x1b[2K", "erased before the question");
    const before = stderr.written.length;
    // Events that arrive while the question waits draw nothing over it.
    watcher.onEvent({ type: "tool-call", toolCallId: "t1", toolName: "Bash", input: {} });
    watcher.onEvent({ type: "step", step: 2 });
    assert.equal(stderr.written.length, before);
  });
  watcher.onEvent({ type: "step", step: 3 });
  assert.match(stderr.written.at(-1) ?? "", /step 3/);
  await watcher.finish();
  assert.equal(stderr.written.at(-1), "\r\x1b[2K", "erased at the end");
});

test("gatehouse-events writes every event as one JSON line, in order, and nothing on stderr", async () => {
  const stdout = tty();
  const stderr = tty();
  const watcher = new RunWatcher("gatehouse-events", stdout, stderr, (t) => t);
  watcher.start();
  watcher.onEvent({ type: "run-start", sessionId: "s", runId: "r", outputHeld: false });
  watcher.onEvent({ type: "text-delta", delta: "\u001b[2Jhi" });
  await watcher.finish();
  assert.deepEqual(
    stdout.written.map((l) => JSON.parse(l).type),
    ["run-start", "text-delta"],
  );
  assert.equal(JSON.parse(stdout.written[1] ?? "").delta, "\u001b[2Jhi", "text kept exact, escaped as JSON");
  assert.ok(!(stdout.written[1] ?? "").includes("\u001b"), "no raw escape on the terminal");
  assert.deepEqual(stderr.written, []);
});

test("Ctrl-C while the reply streams: the streamed line is ended, so the cancellation notice starts its own", async () => {
  const stdout = tty();
  const stderr = tty();
  const watcher = new RunWatcher("text", stdout, stderr, (t) => t);
  watcher.start();
  watcher.onEvent({ type: "step", step: 1 });
  watcher.onEvent({ type: "text-delta", delta: "half a sent" });
  assert.equal(stdout.written.join(""), "half a sent");
  watcher.interrupted();
  assert.equal(stdout.written.join(""), "half a sent\n");
  assert.equal(stderr.written.at(-1), "\r\x1b[2K", "no status line left under the notice");
  await watcher.finish();
  assert.equal(stdout.written.join(""), "half a sent\n", "finish adds no second newline");
});

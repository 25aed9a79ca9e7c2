import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { sandboxPolicy } from "../../src/sandbox/policy.js";
import type { SandboxRefusalKind } from "../../src/sandbox/refusals.js";
import { resetSandbox, sandboxAvailability, wrapInSandbox } from "../../src/sandbox/runtime.js";
import { DEFAULT_SANDBOX_SETTINGS, type SandboxSettings } from "../../src/sandbox/settings.js";

const availability = sandboxAvailability();
const skip = availability.available ? false : `the sandbox is unavailable here: ${availability.reason}`;
// `.invalid` never resolves: a host allowed by mistake still sends nothing anywhere.
const HOST = "gatehouse-runtime-test.invalid";

function project(t: { after(fn: () => unknown): void }): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "gatehouse-sandbox-runtime-")));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function policyFor(dir: string, network: Partial<SandboxSettings["network"]> = {}) {
  const settings = { ...DEFAULT_SANDBOX_SETTINGS, network: { ...DEFAULT_SANDBOX_SETTINGS.network, ...network } };
  return sandboxPolicy(settings, [], { projectDir: dir, homeDir: join(dir, "home") });
}

/**
 * Puts a `which` first on $PATH that records each name it is asked for and, for the names in
 * `slow`, runs past the runtime's one-second limit (the first time only when `once`), as a `which`
 * on a loaded machine does. Returns the names asked for so far.
 */
function slowWhich(t: { after(fn: () => unknown): void }, slow: readonly string[], once: boolean): () => string[] {
  const dir = project(t);
  const asked = join(dir, "asked");
  const script = join(dir, "which");
  writeFileSync(
    script,
    `#!/bin/sh
echo "$1" >> ${JSON.stringify(asked)}
case " ${slow.join(" ")} " in *" $1 "*)
  if ${once ? `[ ! -e ${JSON.stringify(join(dir, "slowed"))} ]` : "true"}; then : > ${JSON.stringify(join(dir, "slowed"))}; exec sleep 5; fi ;;
esac
exec /usr/bin/which "$@"
`,
  );
  chmodSync(script, 0o755);
  const path = process.env.PATH;
  process.env.PATH = `${dir}:${path}`;
  t.after(() => {
    process.env.PATH = path;
  });
  return () => (existsSync(asked) ? readFileSync(asked, "utf8").split("\n").filter(Boolean) : []);
}

function bwrapRefusesUserns(): boolean {
  const bwrap = realBwrap();
  if (bwrap === "" || (statSync(bwrap).mode & 0o4000) !== 0) return false;
  const help = spawnSync(bwrap, ["--help"], { encoding: "utf8" });
  return `${help.stdout}${help.stderr}`.includes("--disable-userns");
}

function realBwrap(): string {
  return spawnSync("sh", ["-c", "command -v bwrap"], { encoding: "utf8" }).stdout.trim();
}

/** A bubblewrap in `dir` that runs `onHelp` (sh) before answering `--help`; otherwise it is the real one. */
function bwrapAnsweringHelp(dir: string, onHelp: string): string {
  const path = join(dir, "bwrap");
  writeFileSync(
    path,
    `#!/bin/sh\nif [ "$1" = --help ]; then ${onHelp}; fi\nexec ${JSON.stringify(realBwrap())} "$@"\n`,
  );
  chmodSync(path, 0o755);
  return path;
}

const skipUnlessUsernsRefusable = bwrapRefusesUserns()
  ? false
  : "this bubblewrap cannot refuse user namespaces (before 0.8.0, or setuid)";

/** Runs a wrapped command to its end: its stdout, then the release. */
function run(argv: readonly string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0] as string, argv.slice(1), { cwd, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", () => resolve(out));
  });
}

describe("the sandbox runtime shared by a process's commands", { skip }, () => {
  test("commands of two projects wrapped at the same moment, after a third project's command, each reach the network check and each refusal is reported", async (t) => {
    t.after(() => resetSandbox());
    const [first, a, b] = [project(t), project(t), project(t)];
    const earlier = await wrapInSandbox("true", { shell: "/bin/sh", cwd: first, policy: policyFor(first) });
    await run(earlier.argv, first);
    earlier.release();
    // Wrapped together: neither may restart the runtime under the other (a restart left a
    // command with a proxy that had no policy: refused, and no refusal reported).
    const refused: Record<string, SandboxRefusalKind[]> = { a: [], b: [] };
    const command = `curl -s -m 20 -o /dev/null -w 'status %{http_code}' http://${HOST}/`;
    const wrapped = await Promise.all(
      (["a", "b"] as const).map((name) => {
        const cwd = name === "a" ? a : b;
        return wrapInSandbox(command, {
          shell: "/bin/sh",
          cwd,
          policy: policyFor(cwd),
          ask: async () => false,
          refused: (kind) => refused[name]?.push(kind),
        });
      }),
    );
    const outputs = await Promise.all(wrapped.map((w, n) => run(w.argv, n === 0 ? a : b)));
    for (const w of wrapped) w.release();
    assert.deepEqual(outputs, ["status 403", "status 403"]);
    assert.ok(refused.a?.includes("network"), JSON.stringify(refused));
    assert.ok(refused.b?.includes("network"), JSON.stringify(refused));
  });

  test("a command whose socket settings differ waits for the commands running with other settings to end, and one whose signal aborts meanwhile is not started", async (t) => {
    t.after(() => resetSandbox());
    const [a, b, c] = [project(t), project(t), project(t)];
    const running = await wrapInSandbox("true", { shell: "/bin/sh", cwd: a, policy: policyFor(a) });
    const order: string[] = [];
    const waiting = wrapInSandbox("true", {
      shell: "/bin/sh",
      cwd: b,
      policy: policyFor(b, { allowLocalBinding: true }),
    }).then((w) => {
      order.push("admitted");
      return w;
    });
    const cancel = new AbortController();
    const cancelled = wrapInSandbox("true", {
      shell: "/bin/sh",
      cwd: c,
      policy: policyFor(c, { allowLocalBinding: true }),
      signal: cancel.signal,
    });
    // A command with the running settings is admitted after both were looked at, and neither was.
    const same = await wrapInSandbox("true", { shell: "/bin/sh", cwd: a, policy: policyFor(a) });
    same.release();
    assert.equal(order.length, 0, "neither waiting command was admitted");
    cancel.abort();
    await assert.rejects(cancelled, /running with other socket settings .* this command was not started/);
    order.push("released");
    running.release();
    const admitted = await waiting;
    assert.deepEqual(order, ["released", "admitted"]);
    assert.equal((await run(admitted.argv, b)).trim(), "");
    admitted.release();
  });

  test("a command whose shell lookup runs out of time (a loaded machine) is wrapped again and runs; a shell that does not exist fails without a second try", async (t) => {
    t.after(() => resetSandbox());
    const dir = project(t);
    const first = await wrapInSandbox("true", { shell: "/bin/sh", cwd: dir, policy: policyFor(dir) });
    first.release();
    const asked = slowWhich(t, ["/bin/sh"], true);
    const wrapped = await wrapInSandbox("echo ran", { shell: "/bin/sh", cwd: dir, policy: policyFor(dir) });
    assert.equal((await run(wrapped.argv, dir)).trim(), "ran");
    wrapped.release();
    assert.deepEqual(
      asked().filter((name) => name === "/bin/sh"),
      ["/bin/sh", "/bin/sh"],
    );
    const missing = join(dir, "no-such-shell");
    await assert.rejects(
      wrapInSandbox("true", { shell: missing, cwd: dir, policy: policyFor(dir) }),
      /Shell '.*no-such-shell' not found in PATH/,
    );
    assert.deepEqual(
      asked().filter((name) => name === missing),
      [missing],
    );
  });

  test("the runtime is handed bubblewrap's and socat's paths: no lookup that runs out of time can drop --disable-userns from a command allowed every unix socket", {
    skip: skipUnlessUsernsRefusable,
  }, async (t) => {
    t.after(() => resetSandbox());
    const dir = project(t);
    // No seccomp helper then: the sandbox relies on bubblewrap to refuse new user namespaces.
    const options = { shell: "/bin/sh", cwd: dir, policy: policyFor(dir, { allowAllUnixSockets: true }) };
    (await wrapInSandbox("true", options)).release();
    const asked = slowWhich(t, ["bwrap", "socat"], false);
    const wrapped = await wrapInSandbox("true", options);
    wrapped.release();
    assert.ok(wrapped.argv.join(" ").includes("--disable-userns"), wrapped.argv.join(" "));
    assert.deepEqual(
      asked().filter((name) => name === "bwrap" || name === "socat"),
      [],
    );
  });

  test("a bubblewrap slow to answer the runtime's five-second --help probe still gets --disable-userns in a command allowed every unix socket", {
    skip: skipUnlessUsernsRefusable,
  }, async (t) => {
    t.after(() => resetSandbox());
    const dir = project(t);
    // Its first `--help` runs past the runtime's limit, as on a loaded machine.
    const slowed = join(dir, "slowed");
    const bwrapPath = bwrapAnsweringHelp(
      dir,
      `if [ ! -e ${JSON.stringify(slowed)} ]; then : > ${JSON.stringify(slowed)}; sleep 6; fi`,
    );
    const wrapped = await wrapInSandbox("echo ran", {
      shell: "/bin/sh",
      cwd: dir,
      policy: policyFor(dir, { allowAllUnixSockets: true }),
      bwrapPath,
    });
    try {
      assert.ok(existsSync(slowed), "the slow --help was asked");
      assert.ok(wrapped.argv.join(" ").includes("--disable-userns"), wrapped.argv.join(" "));
      assert.equal((await run(wrapped.argv, dir)).trim(), "ran");
    } finally {
      wrapped.release();
    }
  });

  test("a bubblewrap that can refuse user namespaces but never answers the runtime's probe starts no sandbox, and leaves nothing started that the next command would reuse", {
    skip: skipUnlessUsernsRefusable,
  }, async (t) => {
    t.after(() => resetSandbox());
    const dir = project(t);
    // Gatehouse's own question (the first `--help`) is answered; every later `--help` prints nothing,
    // which the runtime counts as no answer, as it does a probe that ran out of time.
    const answered = join(dir, "answered");
    const silentPath = bwrapAnsweringHelp(
      dir,
      `if [ -e ${JSON.stringify(answered)} ]; then exit 0; fi; : > ${JSON.stringify(answered)}`,
    );
    const options = { shell: "/bin/sh", cwd: dir, policy: policyFor(dir, { allowAllUnixSockets: true }) };
    await assert.rejects(
      wrapInSandbox("echo ran", { ...options, bwrapPath: silentPath }),
      /can refuse user namespaces, but did not answer the sandbox runtime's check in time; no command is started without that refusal/,
    );
    assert.ok(existsSync(answered), "Gatehouse asked the wrapper first");
    // A failed check leaves no runtime started with the wrapper: the next command runs under its own bubblewrap.
    const wrapped = await wrapInSandbox("echo ran", { ...options, bwrapPath: realBwrap() });
    try {
      const argv = wrapped.argv.join(" ");
      assert.ok(!argv.includes(silentPath), argv);
      assert.ok(argv.includes("--disable-userns"), argv);
      assert.equal((await run(wrapped.argv, dir)).trim(), "ran");
    } finally {
      wrapped.release();
    }
  });

  test("a program that started the sandbox and has no signal handler of its own still ends on its first SIGTERM (the runtime's cleanup listens for it)", async (t) => {
    const dir = project(t);
    const runtimeModule = new URL("../../src/sandbox/runtime.ts", import.meta.url).href;
    const policyModule = new URL("../../src/sandbox/policy.ts", import.meta.url).href;
    const settingsModule = new URL("../../src/sandbox/settings.ts", import.meta.url).href;
    const program = join(dir, "embedder.mts");
    writeFileSync(
      program,
      `import { wrapInSandbox } from ${JSON.stringify(runtimeModule)};
import { sandboxPolicy } from ${JSON.stringify(policyModule)};
import { DEFAULT_SANDBOX_SETTINGS } from ${JSON.stringify(settingsModule)};
const policy = sandboxPolicy(DEFAULT_SANDBOX_SETTINGS, [], { projectDir: ${JSON.stringify(dir)}, homeDir: ${JSON.stringify(dir)} });
const wrapped = await wrapInSandbox("true", { shell: "/bin/sh", cwd: ${JSON.stringify(dir)}, policy });
wrapped.release();
setInterval(() => {}, 60_000);
process.stdout.write("started\\n");
`,
    );
    // From this checkout, where tsx resolves.
    const child = spawn(process.execPath, ["--import", "tsx", program], { stdio: ["ignore", "pipe", "inherit"] });
    t.after(() => child.kill("SIGKILL"));
    const ended = new Promise<NodeJS.Signals | number | null>((resolve) =>
      child.on("exit", (code, signal) => resolve(signal ?? code)),
    );
    const started = new Promise<void>((resolve) =>
      child.stdout.on("data", (chunk: Buffer) => chunk.includes("started") && resolve()),
    );
    assert.equal(await Promise.race([started.then(() => "started"), ended]), "started");
    child.kill("SIGTERM");
    assert.equal(await ended, "SIGTERM");
  });
});

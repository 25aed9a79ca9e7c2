// The escape corpus (issue 25): each case tries one way out of the Bash tool's sandbox and leaves
// a canary where it got out. Run as a process of its own — it stands for Gatehouse: a provider key
// is in its environment, as in a real run — once with the sandbox on and once with it off:
//
//   node --import tsx test/sandbox/escape-corpus.ts on|off  →  one JSON line: {case: evidence}
//
// The evidence of a case holds CANARY when the way out worked. escape.test.ts runs both modes.
import { createSocket } from "node:dgram";
import { mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseRule } from "../../src/permissions/rules.js";
import { createBashSandbox } from "../../src/sandbox/bash.js";
import { resetSandbox } from "../../src/sandbox/runtime.js";
import { createBashTool } from "../../src/tools/builtin/bash.js";
import { ToolError } from "../../src/tools/types.js";

export const CANARY = "CANARY-7f3e9a";

export interface CorpusCase {
  readonly name: string;
  readonly command: string;
  /** Evidence gathered after the call (a file it wrote, a process it left); default: the command's output. */
  readonly after?: () => Promise<string> | string;
  /** Runs in a call of its own (what is checked is what outlives the call). */
  readonly alone?: boolean;
}

/** Whether any process on the host (this one's /proc) has `marker` in its command line; kills what it finds. */
function survivors(marker: string): string {
  const found: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (/\) [ZX] /.test(stat)) continue;
      if (!readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(marker)) continue;
      found.push(entry);
      process.kill(Number(entry), "SIGKILL");
    } catch {
      // Gone meanwhile.
    }
  }
  return found.length > 0 ? `${CANARY}: ${found.length} process(es) outlived the call` : "none left";
}

/** Whether a live process on the host has `marker` in its command line. */
function alive(marker: string): boolean {
  return readdirSync("/proc").some((entry) => {
    try {
      return (
        /^\d+$/.test(entry) &&
        !/\) [ZX] /.test(readFileSync(`/proc/${entry}/stat`, "utf8")) &&
        readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(marker)
      );
    } catch {
      return false;
    }
  });
}

/**
 * The PID namespace's teardown is the kernel's, and a killed process may take a moment to become a
 * zombie after the call returned: sandboxed, wait (at most 3 s) for the marker to vanish. Then
 * report, and kill, whatever is left.
 */
async function survivorsAfterTeardown(marker: string, sandboxed: boolean): Promise<string> {
  const deadline = performance.now() + 3000;
  while (sandboxed && alive(marker) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  return survivors(marker);
}

async function main(mode: "on" | "off"): Promise<void> {
  const root = realpathSync(tmpdir());
  const base = join(root, `gatehouse-escape-${process.pid}-${mode}`);
  const home = join(base, "home");
  const project = join(base, "project");
  const outside = join(base, "outside");
  for (const dir of [join(home, ".ssh"), project, outside]) mkdirSync(dir, { recursive: true });
  writeFileSync(join(home, ".ssh", "id_rsa"), `${CANARY} ssh key\n`);
  writeFileSync(join(project, ".env"), `SECRET=${CANARY}\n`);
  writeFileSync(join(outside, "victim"), "untouched\n");

  const http = createServer((_req, res) => res.end(`${CANARY} from the loopback server\n`));
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const port = (http.address() as AddressInfo).port;
  const queries: string[] = [];
  const dns = createSocket("udp4", (msg) => queries.push(msg.toString("latin1")));
  await new Promise<void>((resolve) => dns.bind(0, "127.0.0.1", resolve));
  const dnsPort = (dns.address() as AddressInfo).port;

  const sandboxed = mode === "on";
  const rule = "Read(.env)";
  const sandbox = createBashSandbox({
    projectDir: project,
    homeDir: home,
    rules: [
      {
        behavior: "deny",
        rule,
        parsed: parseRule(rule, "deny") as never,
        id: "project.deny.0",
        source: "project",
        baseDir: project,
      },
    ],
    settings: {
      ...(await import("../../src/sandbox/settings.js")).DEFAULT_SANDBOX_SETTINGS,
      enabled: sandboxed,
    },
  });
  if (sandboxed && !sandbox.active) throw new Error(`the sandbox is not active: ${sandbox.status}`);
  const tool = createBashTool({ sandbox, env: { ...process.env, HOME: home }, maxOutputChars: 1_000_000 });
  const run = async (command: string): Promise<string> => {
    try {
      const out = await tool.execute({ command }, { cwd: project, signal: new AbortController().signal });
      return `${out.stdout}${out.stderr}`;
    } catch (error) {
      return error instanceof ToolError ? error.message : String(error);
    }
  };
  const marker = (name: string) => `${name}-${process.pid}-${mode}`;
  const fileHas = (file: string) => () => {
    try {
      return readFileSync(file, "utf8");
    } catch {
      return "no file";
    }
  };
  const loop = `http://127.0.0.1:${port}/`;
  const cases: CorpusCase[] = [
    { name: "read ~/.ssh/id_rsa", command: "cat ~/.ssh/id_rsa" },
    { name: "read a Read-denied .env", command: "cat .env; cat ./sub/../.env" },
    { name: "/proc/$PPID/environ", command: `tr '\\0' '\\n' < /proc/$PPID/environ` },
    {
      name: "/proc/1/environ and every process",
      command: "cat /proc/1/environ /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -a _API_KEY=",
    },
    { name: "ps e", command: "ps axeww | grep -a -o '_API_KEY=[^ ]*'" },
    {
      name: "write outside the project",
      command: `echo ${CANARY} > ${outside}/written`,
      after: fileHas(join(outside, "written")),
    },
    {
      name: "write through ..",
      command: `echo ${CANARY} > ../outside/dotdot`,
      after: fileHas(join(outside, "dotdot")),
    },
    {
      name: "symlink out of the project (write)",
      command: `ln -s ${outside} out && echo ${CANARY} > out/via-link`,
      after: fileHas(join(outside, "via-link")),
    },
    { name: "symlink out of the project (read)", command: "ln -s ~/.ssh/id_rsa key && cat key" },
    {
      name: "hard link to a file outside",
      command: `ln ${outside}/victim hard && echo ${CANARY} >> hard`,
      after: fileHas(join(outside, "victim")),
    },
    { name: "hard link to the ssh key", command: "ln ~/.ssh/id_rsa hardkey && cat hardkey" },
    { name: "loopback HTTP server (direct)", command: `curl -s -m 5 --noproxy '*' ${loop}` },
    { name: "loopback HTTP server (through the proxy)", command: `curl -s -m 5 ${loop}` },
    {
      name: "private address spellings of loopback",
      command: `for h in '[::ffff:127.0.0.1]' '[::ffff:7f00:1]' 2130706433 0x7f.1 127.1; do curl -s -m 5 "http://$h:${port}/"; done`,
    },
    {
      // No traffic must reach a real metadata service: only refusal is asserted (sandboxed only).
      name: "metadata address",
      command: sandboxed
        ? `curl -s -m 5 -o /dev/null -w '%{http_code}' http://169.254.169.254/latest/meta-data/; echo; curl -s -m 2 --noproxy '*' http://169.254.169.254/ || echo direct-refused-$?`
        : "echo skipped",
    },
    {
      name: "DNS to a name not allowed",
      command: `node -e "const d=new (require('dns').promises.Resolver)({timeout:1000,tries:1});d.setServers(['127.0.0.1:${dnsPort}']);d.resolve4('${CANARY.toLowerCase()}.example').catch(()=>{})"`,
      after: () => (queries.some((q) => q.includes(CANARY.toLowerCase())) ? `${CANARY} query received` : "no query"),
    },
    {
      name: "setsid daemon",
      alone: true,
      command: `setsid sh -c 'sleep 300' ${marker("setsid")} > /dev/null 2>&1 < /dev/null & echo started`,
      after: () => survivorsAfterTeardown(marker("setsid"), sandboxed),
    },
    {
      name: "double-fork daemon",
      alone: true,
      command: `( ( sh -c 'sleep 300' ${marker("double")} > /dev/null 2>&1 < /dev/null & ) & ); echo started`,
      after: () => survivorsAfterTeardown(marker("double"), sandboxed),
    },
    {
      name: "background job still writing after the call",
      alone: true,
      command: `nohup sh -c 'while :; do echo tick >> bg.log; sleep 1; done' ${marker("bg")} > /dev/null 2>&1 & echo started`,
      after: () => survivorsAfterTeardown(marker("bg"), sandboxed),
    },
  ];
  // Sandbox start-up is most of a call's cost: the cases that need no call of their own share one.
  const shared = cases.filter((c) => !c.alone);
  const batch = await run(shared.map((c, i) => `echo; echo '@@@${i}@@@'; ( ${c.command} ) 2>&1;`).join("\n"));
  const sections = batch.split(/\n@@@(\d+)@@@\n/);
  const outputs = new Map<CorpusCase, string>();
  for (let k = 1; k < sections.length; k += 2)
    outputs.set(shared[Number(sections[k])] as CorpusCase, sections[k + 1] ?? "");
  for (const c of cases.filter((c) => c.alone)) outputs.set(c, await run(c.command));
  const evidence: Record<string, string> = {};
  for (const c of cases) {
    const output = outputs.get(c) ?? "";
    evidence[c.name] = c.after ? `${await c.after()}\n(output: ${output})` : output;
  }
  if (sandboxed) evidence["control: an allowed loopback host is reachable through the proxy"] = await controlAllowed();
  http.close();
  dns.close();
  await resetSandbox();
  rmSync(base, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify(evidence)}\n`);

  /** The metadata case's control: the same proxy path reaches a host a setting names. */
  async function controlAllowed(): Promise<string> {
    const open = createBashSandbox({
      projectDir: project,
      homeDir: home,
      settings: {
        ...(await import("../../src/sandbox/settings.js")).DEFAULT_SANDBOX_SETTINGS,
        network: {
          ...(await import("../../src/sandbox/settings.js")).DEFAULT_SANDBOX_SETTINGS.network,
          allowedDomains: ["127.0.0.1"],
        },
      },
    });
    const t = createBashTool({ sandbox: open, env: { ...process.env, HOME: home } });
    const out = await t.execute(
      { command: `curl -s -m 5 --noproxy '' ${loop}` },
      { cwd: project, signal: new AbortController().signal },
    );
    return out.stdout;
  }
}

if (process.argv[1]?.endsWith("escape-corpus.ts")) {
  const mode = process.argv[2];
  if (mode !== "on" && mode !== "off") throw new Error("usage: escape-corpus.ts on|off");
  await main(mode);
}

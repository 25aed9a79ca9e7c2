import { homedir } from "node:os";
import { join } from "node:path";
import { createGatehouse } from "../assembly/gatehouse.js";
import { loadSources, permissionPolicy } from "../assembly/sources.js";
import { formatDiagnostic } from "../command-hooks/diagnostics.js";
import { answer, type HookAnswer } from "../host-hooks/answer.js";
import { evaluate, failClosed, GUARD_FAILED, type GuardProject } from "../host-hooks/evaluate.js";
import type { Agent } from "../host-hooks/hosts.js";
import { PayloadError, readRequest } from "../host-hooks/request.js";
import type { HostLogger } from "../plugins/host.js";
import { describe, loadProject, PLUGIN_NOT_LOADED } from "./project.js";

type Env = Readonly<Record<string, string | undefined>>;

/** A project's guard: its plugins and rules loaded, or why they could not be (every call then fails closed). */
export interface Guard {
  /** The files whose content the guard was built from: a change means a reload. */
  readonly watched: readonly string[];
  answer(agent: Agent, payload: unknown): Promise<HookAnswer>;
  close(): Promise<void>;
}

/** Log lines of plugins (never event content: the engine's and the host's lines carry none) go to stderr. */
const stderrLogger = (write: (line: string) => void): HostLogger => ({
  debug: () => {},
  info: () => {},
  warn: (m) => write(`gatehouse: ${m}\n`),
  error: (m) => write(`gatehouse: ${m}\n`),
});

/**
 * The project's Gatehouse for answering other agents' hooks: gatehouse.json's plugins and the
 * permission rules of gatehouse.json and the settings files, through the one assembly. Command
 * hooks are not loaded: the agent runs its own (and this very hook is one of them). No model,
 * no tools, a memory store: nothing is written.
 */
export async function openGuard(projectDir: string, env: Env, log: (line: string) => void): Promise<Guard> {
  const watched = new Set<string>([join(env.HOME || homedir(), ".claude", "settings.json")]);
  let project: GuardProject | undefined;
  let failure: string | undefined;
  try {
    const { config, file, settings, trust } = await loadProject({}, { cwd: projectDir, env });
    for (const p of [...trust.paths, trust.store, file]) if (p) watched.add(p);
    for (const e of settings.pluginEntries) if (e.path) watched.add(e.path);
    const sources = loadSources({
      projectDir,
      config: {
        file: file ?? "gatehouse.json",
        ...(config.permissions === undefined ? {} : { permissions: config.permissions }),
      },
      permissions: { files: true, ...(trust.trusted ? {} : { untrustedFiles: trust.paths }) },
      envPolicy: settings.envPolicy,
    });
    const policy = permissionPolicy(sources.permissions, projectDir, false);
    const errors = sources.permissions.diagnostics.filter((d) => d.level === "error");
    const gatehouse = createGatehouse({
      model: "scripted:echo",
      pluginEntries: settings.pluginEntries,
      store: { kind: "memory" },
      tools: [],
      permissions: policy,
      logger: stderrLogger(log),
      config: settings.runtime,
      env: env as NodeJS.ProcessEnv,
      envPolicy: settings.envPolicy,
    });
    await gatehouse.ready();
    project = { gatehouse, policy };
    const broken = gatehouse.plugins.list().filter((p) => p.status === "failed");
    const notLoaded = gatehouse.plugins.diagnostics.filter((d) => PLUGIN_NOT_LOADED.has(d.code));
    if (errors.length > 0) {
      for (const d of errors) log(`gatehouse: ${formatDiagnostic(d)}\n`);
      failure = "Blocked: Gatehouse's permission settings have errors (`gatehouse permissions` lists them).";
    } else if (broken.length > 0 || notLoaded.length > 0)
      failure = "Blocked: a Gatehouse plugin of this project could not be loaded (`gatehouse plugins list`).";
    else if (!trust.trusted && trust.files.some((f) => f.held.some((h) => h.key === "plugins")))
      failure = "Blocked: this project's Gatehouse plugins wait for trust (run `gatehouse trust` in the project).";
  } catch (error) {
    log(`gatehouse: cannot load the project's policy: ${describe(error)}\n`);
    failure = "Blocked: Gatehouse could not load this project's policy.";
  }
  return {
    watched: [...watched],
    async answer(agent, payload) {
      let request: ReturnType<typeof readRequest>;
      try {
        request = readRequest(agent, payload);
      } catch (error) {
        if (!(error instanceof PayloadError)) throw error;
        // A payload we cannot read: refused, and said on stderr with exit 2, which every agent reads as a block.
        return { exitCode: 2, stdout: "", stderr: `gatehouse: ${error.message}\n` };
      }
      if (request === undefined) return { exitCode: 0, stdout: "", stderr: "" };
      if (failure !== undefined || project === undefined)
        return answer(request, failClosed(request, failure ?? GUARD_FAILED));
      try {
        return answer(request, await evaluate(project, request));
      } catch (error) {
        log(`gatehouse: the policy could not be evaluated: ${describe(error)}\n`);
        return answer(request, failClosed(request, GUARD_FAILED));
      }
    },
    async close() {
      await project?.gatehouse.close().catch(() => undefined);
    },
  };
}

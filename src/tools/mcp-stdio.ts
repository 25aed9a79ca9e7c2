import { type ChildProcess, spawn } from "node:child_process";
import { PassThrough } from "node:stream";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { killGroup, trackGroup, waitGroupGone } from "../core/process-groups.js";

export interface StdioServerProcess {
  readonly command: string;
  readonly args?: readonly string[];
  /** The whole environment of the server (the caller applied the environment policy). */
  readonly env: Record<string, string>;
  readonly cwd: string;
  /** How long a server has to exit on its own after its stdin closes, then after SIGTERM (default 1000 ms). */
  readonly killGraceMs?: number;
  /** Called once the server's process has ended (the sandbox lets go of its policy). */
  readonly onClose?: () => void;
}

/**
 * The MCP SDK's stdio client transport, except that the server leads its own process group
 * (as the Bash tool and command hooks do): closing it ends its stdin, then signals the whole
 * group — SIGTERM, then SIGKILL — so a server started through `npx` or a shell does not leave
 * its real process behind, and the group is tracked so that Gatehouse's exit kills it at the
 * latest. Framing is the SDK's own (`ReadBuffer`, `serializeMessage`). Being in its own group, a
 * server no longer receives the terminal's Ctrl-C: cancelling a turn does not kill it.
 */
export class GroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  /** Written to as the server writes its stderr; available before `start`. */
  readonly stderr = new PassThrough();
  private child: ChildProcess | undefined;
  private readonly buffer = new ReadBuffer();
  private untrack: () => void = () => {};
  private closing: Promise<void> | undefined;

  constructor(private readonly server: StdioServerProcess) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): Promise<void> {
    if (this.child) throw new Error("GroupStdioTransport already started");
    return new Promise((resolve, reject) => {
      const child = spawn(this.server.command, [...(this.server.args ?? [])], {
        env: this.server.env,
        cwd: this.server.cwd,
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
      });
      this.child = child;
      child.on("error", (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.on("spawn", () => {
        if (child.pid !== undefined) this.untrack = trackGroup(child.pid);
        resolve();
      });
      child.on("close", () => {
        this.untrack();
        this.server.onClose?.();
        if (this.child === child) this.child = undefined;
        this.onclose?.();
      });
      child.stdin?.on("error", (error) => this.onerror?.(error));
      child.stdout?.on("data", (chunk: Buffer) => {
        try {
          this.buffer.append(chunk);
          this.drain();
        } catch (error) {
          this.onerror?.(error as Error);
          void this.close();
        }
      });
      child.stdout?.on("error", (error) => this.onerror?.(error));
      child.stderr?.pipe(this.stderr);
    });
  }

  private drain(): void {
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.buffer.readMessage();
      } catch (error) {
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || stdin.destroyed) {
        reject(new Error("Not connected"));
        return;
      }
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once("drain", resolve);
    });
  }

  /** Ends stdin, then kills the group if it has not exited within the grace; safe to call twice. */
  close(): Promise<void> {
    this.closing ??= this.stop();
    return this.closing;
  }

  private async stop(): Promise<void> {
    const child = this.child;
    const pgid = child?.pid;
    if (child !== undefined && pgid !== undefined) {
      const grace = this.server.killGraceMs ?? 1000;
      try {
        child.stdin?.end();
      } catch {
        // Already closed.
      }
      if (!(await waitGroupGone(pgid, grace))) {
        killGroup(pgid, "SIGTERM");
        if (!(await waitGroupGone(pgid, grace))) {
          killGroup(pgid, "SIGKILL");
          await waitGroupGone(pgid, grace);
        }
      }
      // A member that left the group (setsid) may still hold the pipes.
      child.stdout?.destroy();
      child.stderr?.destroy();
      this.untrack();
    }
    this.buffer.clear();
  }
}

import { createHash } from "node:crypto";
import { chmod, lstat, mkdir, mkdtemp, open, rename, rm, stat, unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Message, messageText, type Part } from "../core/message.js";
import { SerialQueue } from "./serial.js";

// Transcripts for command hooks (`transcript_path`) in Claude Code's JSONL shape: one message a line,
// chained by uuid/parentUuid, tool results as user messages carrying tool_result blocks.

type ContentBlock = Record<string, unknown>;

function contentBlock(part: Part): ContentBlock {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text };
    case "reasoning":
      return { type: "thinking", thinking: part.text, signature: "" };
    case "tool_call":
      return { type: "tool_use", id: part.toolCallId, name: part.toolName, input: part.input ?? {} };
    case "tool_result":
      return {
        type: "tool_result",
        tool_use_id: part.toolCallId,
        content: typeof part.output === "string" ? part.output : JSON.stringify(part.output ?? null),
        ...(part.isError === undefined ? {} : { is_error: part.isError }),
      };
    case "image":
      return { type: "image", source: { type: "base64", media_type: part.mediaType, data: part.data } };
    case "file":
      return {
        type: "document",
        source: { type: "base64", media_type: part.mediaType, data: part.data },
        ...(part.filename === undefined ? {} : { title: part.filename }),
      };
  }
}

function userContent(parts: readonly Part[]): string | ContentBlock[] {
  const only = parts[0];
  if (parts.length === 1 && only?.type === "text") return only.text;
  return parts.map(contentBlock);
}

/** One transcript line for a stored message; `parentUuid` is the id of the line before it. */
export function transcriptEntry(message: Message, parentUuid: string | null): Record<string, unknown> {
  const common = {
    parentUuid,
    isSidechain: false,
    userType: "external",
    sessionId: message.sessionId,
    uuid: message.id,
    timestamp: message.createdAt,
    runId: message.runId,
  };
  switch (message.role) {
    case "user":
    case "tool":
      return { ...common, type: "user", message: { role: "user", content: userContent(message.parts) } };
    case "assistant":
      return {
        ...common,
        type: "assistant",
        message: { role: "assistant", type: "message", content: message.parts.map(contentBlock) },
      };
    case "system":
      return { ...common, type: "system", content: messageText(message), level: "info" };
    case "summary":
      return { ...common, type: "summary", summary: messageText(message) };
  }
}

export type MessagePages = () => AsyncIterable<readonly Message[]>;

/**
 * Transcript files in one private folder (0700, files 0600). Every write replaces the whole file by
 * rename, so a reader sees the old or the new transcript, never a mix; writes of one session are
 * serialized and read the store inside their turn, so the last write always reflects the latest state.
 */
export class TranscriptFiles {
  private dir: string | undefined;
  private createdTempDir = false;
  private readonly queues = new Map<string, SerialQueue>();

  constructor(dir: string | undefined) {
    this.dir = dir;
  }

  pathFor(sessionId: string): string | undefined {
    return this.dir === undefined ? undefined : join(this.dir, fileName(sessionId));
  }

  write(sessionId: string, pages: MessagePages): Promise<string> {
    return this.queue(sessionId).run(() => this.writeFile(sessionId, pages));
  }

  /**
   * Ahead of a scrub: removes the session's transcript, and any temporary copy a writer that died left
   * beside it, so that a crash right after the scrub commits cannot leave the old text in a file. Says
   * whether a transcript existed, to be written again from the store once the scrub is in.
   */
  withdraw(sessionId: string): Promise<boolean> {
    const path = this.pathFor(sessionId);
    if (path === undefined) return Promise.resolve(false);
    return this.queue(sessionId).run(async () => {
      const existed = await stat(path).then(
        () => true,
        () => false,
      );
      await removeWithTemp(path);
      return existed;
    });
  }

  remove(sessionId: string): Promise<void> {
    const path = this.pathFor(sessionId);
    if (path === undefined) return Promise.resolve();
    return this.queue(sessionId).run(() => removeWithTemp(path));
  }

  async dispose(): Promise<void> {
    if (this.createdTempDir && this.dir) await rm(this.dir, { recursive: true, force: true });
  }

  private async writeFile(sessionId: string, pages: MessagePages): Promise<string> {
    const dir = await this.directory();
    const path = join(dir, fileName(sessionId));
    // One temporary name per session: writes of a session are serialized (here, and across processes by
    // its run lock), so a file already there was left by a writer that died, and may hold text a scrub
    // has since removed.
    const temp = tempPath(path);
    await rm(temp, { force: true });
    const file = await open(temp, "wx", 0o600);
    try {
      let parent: string | null = null;
      for await (const page of pages()) {
        let chunk = "";
        for (const message of page) {
          chunk += `${JSON.stringify(transcriptEntry(message, parent))}\n`;
          parent = message.id;
        }
        if (chunk) await file.write(chunk);
      }
      await file.sync();
      await file.close();
      await rename(temp, path);
    } catch (error) {
      await file.close().catch(() => undefined);
      await unlink(temp).catch(() => undefined);
      throw error;
    }
    return path;
  }

  private queue(sessionId: string): SerialQueue {
    let queue = this.queues.get(sessionId);
    if (!queue) {
      queue = new SerialQueue();
      this.queues.set(sessionId, queue);
    }
    return queue;
  }

  private async directory(): Promise<string> {
    if (this.dir === undefined) {
      this.dir = await mkdtemp(join(tmpdir(), "gatehouse-transcripts-"));
      this.createdTempDir = true;
    }
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const info = await lstat(this.dir);
    if (!info.isDirectory()) throw new Error(`transcript folder ${this.dir} is not a directory`);
    if ((info.mode & 0o777) !== 0o700) await chmod(this.dir, 0o700);
    return this.dir;
  }
}

function tempPath(path: string): string {
  return `${path}.tmp`;
}

async function removeWithTemp(path: string): Promise<void> {
  await rm(path, { force: true });
  await rm(tempPath(path), { force: true });
}

function fileName(sessionId: string): string {
  const safe = /^[A-Za-z0-9._-]{1,100}$/.test(sessionId) && !sessionId.startsWith(".");
  return `${safe ? sessionId : createHash("sha256").update(sessionId).digest("hex").slice(0, 40)}.jsonl`;
}

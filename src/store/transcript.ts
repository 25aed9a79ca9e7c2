import { createHash } from "node:crypto";
import { readdirSync, rmSync } from "node:fs";
import { chmod, lstat, mkdir, mkdtemp, open, rename, rm, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { attachmentOf, type Message, messageText, type Part } from "../core/message.js";
import { SerialQueue } from "./serial.js";

// Transcripts for command hooks (`transcript_path`) in Claude Code's JSONL shape: one message a line,
// chained by uuid/parentUuid, tool results as user messages carrying tool_result blocks, the context
// hooks added as Claude Code's `attachment` lines (and a Stop hook's feedback as a meta user line).

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
  const attachment = attachmentOf(message);
  if (attachment?.type === "stop_hook_feedback")
    return { ...common, type: "user", isMeta: true, message: { role: "user", content: messageText(message) } };
  if (attachment)
    return {
      ...common,
      type: "attachment",
      attachment: {
        type: attachment.type,
        content: [messageText(message)],
        hookName: attachment.hookEvent,
        toolUseID: attachment.toolUseId ?? message.id,
        hookEvent: attachment.hookEvent,
      },
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
 * Where transcripts live:
 * - `dir`: straight in this folder, which outlives the process like the store's data does
 *   (SQLite's data folder, or one a caller names); a scrub withdraws a stale file there.
 * - `processFolderIn`: in a folder of this process's own inside it, for a store whose data dies
 *   with the process (memory) or that has no folder of its own. The folder goes on `close()`
 *   and when the process exits; one a process that died left behind (SIGKILL) is removed by the
 *   next store that looks in the same place, since nothing else could ever scrub it.
 */
export type TranscriptPlace = { readonly dir: string } | { readonly processFolderIn: string };

const PROCESS_FOLDER = "gatehouse-transcripts-";

/**
 * Transcript files in one private folder (0700, files 0600). Every write replaces the whole file by
 * rename, so a reader sees the old or the new transcript, never a mix; writes of one session are
 * serialized and read the store inside their turn, so the last write always reflects the latest state.
 */
export class TranscriptFiles {
  private dir: string | undefined;
  private readonly processFolderIn: string | undefined;
  private readonly queues = new Map<string, SerialQueue>();

  constructor(place: TranscriptPlace) {
    if ("dir" in place) this.dir = place.dir;
    else {
      this.processFolderIn = place.processFolderIn;
      removeFoldersOfDeadProcesses(place.processFolderIn);
    }
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
    if (this.processFolderIn === undefined || this.dir === undefined) return;
    removeAtExit.delete(this.dir);
    await rm(this.dir, { recursive: true, force: true });
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
      const root = this.processFolderIn as string;
      await mkdir(root, { recursive: true, mode: 0o700 });
      this.dir = await mkdtemp(join(root, `${PROCESS_FOLDER}${process.pid}-`));
      removeAtExit.add(this.dir);
      if (!exitHook) {
        exitHook = true;
        process.once("exit", () => {
          for (const dir of removeAtExit) rmSync(dir, { recursive: true, force: true });
        });
      }
    }
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const info = await lstat(this.dir);
    if (!info.isDirectory()) throw new Error(`transcript folder ${this.dir} is not a directory`);
    if ((info.mode & 0o777) !== 0o700) await chmod(this.dir, 0o700);
    return this.dir;
  }
}

/** Process folders still to remove when the process exits (one `exit` listener for them all). */
const removeAtExit = new Set<string>();
let exitHook = false;

/**
 * Removes the process folders under `root` whose process is gone. A folder's name carries its
 * process id; a live process (or one of another user, which cannot be signalled) keeps its own.
 */
function removeFoldersOfDeadProcesses(root: string): void {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^gatehouse-transcripts-(\d+)-/.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid === process.pid || alive(pid)) continue;
    rmSync(join(root, name), { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
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

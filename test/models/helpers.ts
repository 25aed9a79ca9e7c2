import type { LanguageModelV3 } from "@ai-sdk/provider";
import type { Message, Part, Role } from "../../src/core/message.js";
import type { LanguageModelV3CallOptions } from "../../src/models/index.js";
import { type CollectedResponse, collectStream, type ModelStreamEvent } from "../../src/models/index.js";

let seq = 0;

/** A stored-looking message for conversion tests. */
export function msg(role: Role, parts: Part[] | string, runId: string | null = "run-1"): Message {
  seq += 1;
  return {
    id: `m${seq}`,
    sessionId: "s1",
    runId,
    seq,
    role,
    parts: typeof parts === "string" ? [{ type: "text", text: parts }] : parts,
    metadata: {},
    createdAt: "2025-01-01T00:00:00.000Z",
  };
}

/** Streams one model call and collects it, recording the live events. */
export async function streamCall(
  model: LanguageModelV3,
  options: LanguageModelV3CallOptions,
): Promise<CollectedResponse & { events: ModelStreamEvent[] }> {
  const events: ModelStreamEvent[] = [];
  const { stream } = await model.doStream(options);
  const collected = await collectStream(stream, (event) => events.push(event));
  return { ...collected, events };
}

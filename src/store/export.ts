import type { Message } from "../core/message.js";
import type { InjectionRow } from "./backend.js";
import type { AuditRecord, CompactionSummary, Run, Session } from "./types.js";

export const EXPORT_FORMAT = "gatehouse.session";
export const EXPORT_VERSION = 1;

export interface ExportSources {
  readonly session: Session;
  readonly exportedAt: string;
  readonly runs: () => Promise<Run[]>;
  readonly messagePages: () => AsyncIterable<readonly Message[]>;
  readonly compactions: () => Promise<CompactionSummary[]>;
  readonly injections: () => Promise<InjectionRow[]>;
  readonly audit: () => Promise<AuditRecord[]>;
}

const line = (record: Record<string, unknown>) => `${JSON.stringify(record)}\n`;

/** A session as JSONL: a header, then one line per record, each tagged with its `type`. */
export async function* exportLines(sources: ExportSources): AsyncIterable<string> {
  yield line({ type: "export", format: EXPORT_FORMAT, version: EXPORT_VERSION, exportedAt: sources.exportedAt });
  yield line({ type: "session", ...sources.session });
  for (const run of await sources.runs()) yield line({ type: "run", ...run });
  for await (const page of sources.messagePages()) {
    for (const message of page) yield line({ type: "message", ...message });
  }
  for (const { message, ...compaction } of await sources.compactions()) {
    yield line({ type: "compaction", ...compaction, messageId: message.id });
  }
  for (const { consumedAt: _consumedAt, consumedByRunId: _by, ...injection } of await sources.injections()) {
    yield line({ type: "injection", ...injection });
  }
  for (const record of await sources.audit()) yield line({ type: "audit", ...record });
}

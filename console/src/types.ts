// The API's shapes, as the server's own zod schemas define them (types only: nothing of the
// server is bundled into the page).
import type { z } from "zod";
import type {
  AuditListSchema,
  AuditSummarySchema,
  ConfigurationSchema,
  LiveSchema,
  LoginSchema,
  MeSchema,
  SessionListWithFigures,
  StepSchema,
  TimelineSchema,
} from "../../src/server/console/schemas.js";
import type { MessageSchema, SessionDetailSchema } from "../../src/server/schemas.js";

export type Me = z.output<typeof MeSchema>;
export type Login = z.output<typeof LoginSchema>;
export type SessionList = z.output<typeof SessionListWithFigures>;
export type SessionItem = SessionList["data"][number];
export type SessionDetail = z.output<typeof SessionDetailSchema>;
export type Message = z.output<typeof MessageSchema>;
export type Timeline = z.output<typeof TimelineSchema>;
export type TimelineRun = Timeline["runs"][number];
export type Step = z.output<typeof StepSchema>;
export type AuditList = z.output<typeof AuditListSchema>;
export type AuditRecord = AuditList["data"][number];
export type AuditSummary = z.output<typeof AuditSummarySchema>;
export type Live = z.output<typeof LiveSchema>;
export type LiveRun = Live["runs"][number];
export type PendingAsk = Live["approvals"][number];
export type Configuration = z.output<typeof ConfigurationSchema>;

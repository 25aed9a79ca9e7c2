import { z } from "zod";
import { ModelSpecSchema } from "./model-spec.js";

/** An agent profile: what `GET /v1/models` lists and a request's `model` picks. */
const AgentProfileSchema = z.strictObject({
  model: ModelSpecSchema.optional().describe("The profile's model spec (default: the project's model)."),
  systemPrompt: z.string().optional().describe("The profile's system prompt (default: the project's)."),
  description: z.string().optional().describe("Shown in GET /v1/models."),
});

const positive = z.number().int().min(1);

/**
 * gatehouse.json `server`: how `gatehouse serve` listens and what it allows. Flags and the
 * environment (`GATEHOUSE_HOST`, `GATEHOUSE_PORT`) override `host` and `port`.
 */
export const ServerConfigSchema = z
  .strictObject({
    host: z
      .string()
      .min(1)
      .optional()
      .describe("Address to listen on (default 127.0.0.1). Beyond loopback, an API key must exist."),
    port: z.number().int().min(0).max(65535).optional().describe("Port to listen on (default 8787; 0 picks one)."),
    agents: z
      .record(z.string().regex(/^[A-Za-z0-9._:-]{1,64}$/), AgentProfileSchema)
      .optional()
      .describe(
        'Agent profiles by id, listed by GET /v1/models and chosen by a request\'s "model". Default: one profile, "gatehouse", with the project\'s model and prompt.',
      ),
    approvals: z
      .strictObject({
        mode: z
          .enum(["deny", "client", "console"])
          .optional()
          .describe(
            '"deny" (default; gatehouse console: "console"): a tool call that asks for approval is denied at once, visibly (nobody is there to answer). "client": a streaming client gets an approval-requested event and answers with POST /v1/runs/{runId}/approvals/{toolCallId}; no answer in time denies. "console": every top-level run\'s ask waits, listed in the console\'s Live view (and sent to a streaming client), for whoever answers first.',
          ),
        timeoutMs: positive.optional().describe("How long a client or the console has to answer (default 60000)."),
      })
      .optional(),
    limits: z
      .strictObject({
        bodyBytes: positive.optional().describe("Largest request body (default 1048576); larger is 413."),
        promptChars: positive.optional().describe("Longest prompt (default 100000 characters); longer is 400."),
        runsPerPrincipal: positive
          .optional()
          .describe("Runs one principal may have going on this instance (default 4); more is 429."),
        runsPerInstance: positive.optional().describe("Runs this instance takes at once (default 32); more is 503."),
        requestTimeoutMs: positive
          .optional()
          .describe("A run still going after this is cancelled (default 300000); the request answers 504."),
      })
      .optional(),
    console: z
      .boolean()
      .optional()
      .describe("Serve the web console at /console/ (default true). The API it reads stays either way."),
    shutdownGraceMs: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("On SIGTERM, how long running runs may finish before they are cancelled (default 30000)."),
    recoverEveryMs: positive
      .optional()
      .describe(
        "How often this instance looks for runs another instance left running when it died (its run lease expired) and recovers them, without waiting for their session's next run (default 10000; also once at start).",
      ),
  })
  .describe("gatehouse serve: the HTTP API (see docs/server.md).");

export type ServerConfig = z.infer<typeof ServerConfigSchema>;

import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import type { z } from "zod";
import type { PriorMessage, RunEvent, RunInput, RunResult } from "../runtime/types.js";
import {
  admitted,
  checkPrompt,
  HttpError,
  newSession,
  notFound,
  ownedSession,
  type Profile,
  profileFor,
  requestTraceparent,
  runError,
  type ServerContext,
  sendError,
} from "./context.js";
import { clientGone, wantsStream } from "./native.js";
import {
  ChatCompletionBody,
  ChatCompletionSchema,
  type ChatMessageSchema,
  ErrorSchema,
  ModelList,
  ResponseSchema,
  ResponsesBody,
} from "./schemas.js";
import { SseWriter } from "./sse.js";

/** The header that names a stored session to continue. */
export const SESSION_HEADER = "x-gatehouse-session";
const RESPONSE_ID = /^resp_(.+)$/;

const errors = {
  400: ErrorSchema,
  401: ErrorSchema,
  404: ErrorSchema,
  429: ErrorSchema,
  500: ErrorSchema,
  503: ErrorSchema,
  504: ErrorSchema,
} as const;
const security = [{ bearer: [] }];

type ChatMessage = z.infer<typeof ChatMessageSchema>;

function textOf(content: ChatMessage["content"]): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content
    .filter((p) => (p.type === "text" || p.type === "input_text" || p.type === "output_text") && p.text !== undefined)
    .map((p) => p.text)
    .join("");
}

/**
 * A client's conversation as one turn: the last message is the user's turn; earlier user and
 * assistant texts are prior history (only for a new session: a stored session has its own).
 * System and developer messages, tool messages and tool calls are not used: the agent profile
 * decides the system prompt, and tools run server-side.
 */
function turnOf(messages: readonly ChatMessage[]): { prompt: string; prior: PriorMessage[] } {
  const last = messages.at(-1);
  if (last?.role !== "user")
    throw new HttpError(400, "invalid_request_error", "invalid_messages", "The last message must be the user's turn.");
  const prior: PriorMessage[] = [];
  for (const m of messages.slice(0, -1)) {
    if (m.role !== "user" && m.role !== "assistant") continue;
    const text = textOf(m.content);
    if (text !== "") prior.push({ role: m.role, text });
  }
  return { prompt: textOf(last.content), prior };
}

function usageOf(r: RunResult) {
  const input = r.usage?.inputTokens ?? 0;
  const output = r.usage?.outputTokens ?? 0;
  return { input, output, total: r.usage?.totalTokens ?? input + output };
}

const finishReason = (r: RunResult) =>
  r.outcome === "blocked" ? "content_filter" : r.outcome === "max_steps" ? "length" : "stop";
const gatehouseFields = (r: RunResult) => ({ session_id: r.sessionId, run_id: r.runId, outcome: r.outcome });

interface Turn {
  readonly input: Omit<RunInput, "signal">;
  readonly profile: Profile;
}

/** The session a request continues (header or previous response) or a new one, and the run input. */
async function prepareTurn(
  ctx: ServerContext,
  request: FastifyRequest,
  model: string,
  turn: { prompt: string; prior: PriorMessage[] },
  continueSession: string | undefined,
): Promise<Turn> {
  checkPrompt(ctx, turn.prompt);
  for (const p of turn.prior) checkPrompt(ctx, p.text);
  if (turn.prompt.trim() === "")
    throw new HttpError(400, "invalid_request_error", "empty_prompt", "The user's turn is empty.");
  const profile = profileFor(ctx, model);
  const session = continueSession
    ? await ownedSession(ctx, request.principal, continueSession)
    : await newSession(ctx, request.principal);
  const traceparent = requestTraceparent(request);
  return {
    profile,
    input: {
      prompt: turn.prompt,
      sessionId: session.id,
      channel: "http",
      ...(continueSession || turn.prior.length === 0 ? {} : { priorMessages: turn.prior }),
      ...(profile.model === undefined ? {} : { model: profile.model }),
      ...(profile.systemPrompt === undefined ? {} : { systemPrompt: profile.systemPrompt }),
      ...(traceparent === undefined ? {} : { traceparent }),
    },
  };
}

/**
 * The text a streaming OpenAI client receives: assistant text as it streams (live only while
 * no output gate has a handler), else the delivered text once it passed the gates, else a
 * block's notice. Nothing else of the run (tool calls, results) is sent: tools are server-side.
 */
class StreamedText {
  private streamed = false;

  constructor(private readonly send: (text: string) => void) {}

  onEvent(event: RunEvent): void {
    if (event.type === "text-delta") {
      this.streamed = true;
      this.send(event.delta);
    } else if ((event.type === "final" || event.type === "blocked") && !this.streamed) {
      this.streamed = true;
      this.send(event.type === "final" ? event.text : event.message);
    }
  }
}

async function runTurn(
  ctx: ServerContext,
  request: FastifyRequest,
  reply: FastifyReply,
  turn: Turn,
): Promise<RunResult | undefined> {
  const started = admitted(ctx, () =>
    ctx.runs.start(ctx.gatehouse, request.principal, turn.input, { streaming: false, signal: clientGone(reply) }),
  );
  const result = await started.result;
  const failed = runError(result, started.timedOut());
  if (failed) {
    sendError(reply, failed);
    return undefined;
  }
  reply.header(SESSION_HEADER, result.sessionId);
  return result;
}

/** Streams a turn as SSE; `frame` turns text and the end into the API's own events. */
async function streamTurn(
  ctx: ServerContext,
  request: FastifyRequest,
  reply: FastifyReply,
  turn: Turn,
  frames: {
    start(runId: string, sse: SseWriter): void;
    text(sse: SseWriter, text: string): void;
    end(sse: SseWriter, result: RunResult): void;
  },
): Promise<FastifyReply> {
  const gone = new AbortController();
  let sse: SseWriter | undefined;
  const early: RunEvent[] = [];
  let text: StreamedText | undefined;
  const onEvent = (event: RunEvent) => {
    if (!sse || !text) {
      early.push(event);
      return;
    }
    if (event.type === "run-start") frames.start(event.runId, sse);
    text.onEvent(event);
  };
  const started = admitted(ctx, () =>
    ctx.runs.start(ctx.gatehouse, request.principal, turn.input, { streaming: true, signal: gone.signal, onEvent }),
  );
  reply.hijack();
  const writer = new SseWriter(reply.raw, { [SESSION_HEADER]: turn.input.sessionId ?? "" });
  writer.gone.addEventListener("abort", () => gone.abort(new Error("client gone")), { once: true });
  sse = writer;
  text = new StreamedText((t) => frames.text(writer, t));
  for (const event of early.splice(0)) onEvent(event);
  try {
    const result = await started.result;
    const failed = runError(result, started.timedOut());
    if (failed) writer.send({ error: { message: failed.message, type: failed.type, code: failed.code } });
    else frames.end(writer, result);
  } catch {
    writer.send({ error: { message: "The run failed.", type: "server_error", code: "run_failed" } });
  }
  writer.end();
  return reply;
}

const now = () => Math.floor(Date.now() / 1000);

/** OpenAI-compatible: Chat Completions, Responses, Models. */
export function openaiRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    "/v1/models",
    {
      schema: {
        summary: "The agent profiles",
        tags: ["openai"],
        security,
        response: { 200: ModelList, 401: ErrorSchema },
      },
    },
    async () => ({
      object: "list" as const,
      data: ctx.profiles.map((p) => ({
        id: p.id,
        object: "model" as const,
        created: 0,
        owned_by: "gatehouse",
        ...(p.description === undefined ? {} : { description: p.description }),
      })),
    }),
  );

  r.post(
    "/v1/chat/completions",
    {
      schema: {
        summary: "Chat Completions (stream and not)",
        description:
          "Without X-Gatehouse-Session, the earlier messages are prior history of a new session and the last user message is the turn; with it, that stored session continues. A blocked turn answers with the notice as content (finish_reason content_filter). Tool calls stay server-side.",
        tags: ["openai"],
        security,
        body: ChatCompletionBody,
        response: { 200: ChatCompletionSchema, ...errors },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const sessionHeader = request.headers[SESSION_HEADER];
      const turn = await prepareTurn(
        ctx,
        request,
        body.model,
        turnOf(body.messages),
        typeof sessionHeader === "string" && sessionHeader !== "" ? sessionHeader : undefined,
      );
      const created = now();
      if (wantsStream(request, body.stream ?? undefined)) {
        let id = "";
        const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) => ({
          id,
          object: "chat.completion.chunk",
          created,
          model: body.model,
          choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
          ...extra,
        });
        return streamTurn(ctx, request, reply, turn, {
          start: (runId, sse) => {
            id = `chatcmpl-${runId}`;
            sse.send(chunk({ role: "assistant", content: "" }, null));
          },
          text: (sse, text) => sse.send(chunk({ content: text }, null)),
          end: (sse, result) => {
            sse.send(chunk({}, finishReason(result), { gatehouse: gatehouseFields(result) }));
            if (body.stream_options?.include_usage) {
              const u = usageOf(result);
              sse.send({
                id,
                object: "chat.completion.chunk",
                created,
                model: body.model,
                choices: [],
                usage: { prompt_tokens: u.input, completion_tokens: u.output, total_tokens: u.total },
              });
            }
            sse.send("[DONE]");
          },
        });
      }
      const result = await runTurn(ctx, request, reply, turn);
      if (!result) return reply;
      const u = usageOf(result);
      return {
        id: `chatcmpl-${result.runId}`,
        object: "chat.completion" as const,
        created,
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: "assistant" as const, content: result.reply, refusal: null },
            finish_reason: finishReason(result),
            logprobs: null,
          },
        ],
        usage: { prompt_tokens: u.input, completion_tokens: u.output, total_tokens: u.total },
        gatehouse: gatehouseFields(result),
      };
    },
  );

  r.post(
    "/v1/responses",
    {
      schema: {
        summary: "Responses (stream and not)",
        description:
          "A response id names a run (resp_<runId>); previous_response_id continues that run's session. A blocked turn answers with the notice as output text.",
        tags: ["openai"],
        security,
        body: ResponsesBody,
        response: { 200: ResponseSchema, ...errors },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const messages: ChatMessage[] =
        typeof body.input === "string"
          ? [{ role: "user", content: body.input }]
          : body.input
              .filter((i) => i.type === undefined || i.type === "message")
              .map((i) => ({ role: (i.role ?? "user") as ChatMessage["role"], content: i.content ?? null }));
      let continueSession: string | undefined;
      const previous = body.previous_response_id ?? undefined;
      if (previous !== undefined) {
        const runId = RESPONSE_ID.exec(previous)?.[1];
        const run = runId === undefined ? undefined : await ctx.gatehouse.store.getRun(runId);
        if (!run) throw notFound("response");
        await ownedSession(ctx, request.principal, run.sessionId).catch(() => {
          throw notFound("response");
        });
        continueSession = run.sessionId;
      }
      const turn = await prepareTurn(ctx, request, body.model, turnOf(messages), continueSession);
      const created = now();
      const responseOf = (result: RunResult, text: string | null, status = "completed") => {
        const u = usageOf(result);
        return {
          id: `resp_${result.runId}`,
          object: "response" as const,
          created_at: created,
          status,
          model: body.model,
          previous_response_id: previous ?? null,
          output:
            text === null
              ? []
              : [
                  {
                    type: "message" as const,
                    id: `msg_${result.runId}`,
                    status: "completed" as const,
                    role: "assistant" as const,
                    content: [{ type: "output_text" as const, text, annotations: [] as never[] }],
                  },
                ],
          usage: { input_tokens: u.input, output_tokens: u.output, total_tokens: u.total },
          error: null,
          incomplete_details: null,
          gatehouse: gatehouseFields(result),
        };
      };
      if (wantsStream(request, body.stream ?? undefined)) {
        let seq = 0;
        let id = "";
        let itemId = "";
        let text = "";
        const send = (sse: SseWriter, type: string, data: Record<string, unknown>) =>
          sse.send({ type, sequence_number: seq++, ...data }, type);
        const shell = (status: string) => ({
          id,
          object: "response",
          created_at: created,
          status,
          model: body.model,
          previous_response_id: previous ?? null,
          output: [],
          error: null,
          incomplete_details: null,
        });
        const item = (status: string, content: unknown[]) => ({
          type: "message",
          id: itemId,
          status,
          role: "assistant",
          content,
        });
        let opened = false;
        const open = (sse: SseWriter) => {
          if (opened) return;
          opened = true;
          send(sse, "response.output_item.added", { output_index: 0, item: item("in_progress", []) });
          send(sse, "response.content_part.added", {
            item_id: itemId,
            output_index: 0,
            content_index: 0,
            part: { type: "output_text", text: "", annotations: [] },
          });
        };
        return streamTurn(ctx, request, reply, turn, {
          start: (runId, sse) => {
            id = `resp_${runId}`;
            itemId = `msg_${runId}`;
            send(sse, "response.created", { response: shell("in_progress") });
            send(sse, "response.in_progress", { response: shell("in_progress") });
          },
          text: (sse, delta) => {
            open(sse);
            text += delta;
            send(sse, "response.output_text.delta", {
              item_id: itemId,
              output_index: 0,
              content_index: 0,
              delta,
              logprobs: [],
            });
          },
          end: (sse, result) => {
            if (opened) {
              const part = { type: "output_text", text, annotations: [] };
              send(sse, "response.output_text.done", {
                item_id: itemId,
                output_index: 0,
                content_index: 0,
                text,
                logprobs: [],
              });
              send(sse, "response.content_part.done", { item_id: itemId, output_index: 0, content_index: 0, part });
              send(sse, "response.output_item.done", { output_index: 0, item: item("completed", [part]) });
            }
            send(sse, "response.completed", { response: responseOf(result, opened ? text : null) });
          },
        });
      }
      const result = await runTurn(ctx, request, reply, turn);
      if (!result) return reply;
      return responseOf(result, result.reply);
    },
  );
}

import type { FastifyRequest } from "fastify";
import type { z } from "zod";
import { oneLine } from "../../core/text.js";
import { sessionTitles, TITLE_CHARS } from "../../runtime/session-titles.js";
import type { Session, StoreView } from "../../store/types.js";
import { HttpError, type ServerContext } from "../context.js";
import type { SessionOwner } from "../records.js";
import type { SessionListItemSchema, SessionListQuery } from "./schemas.js";

/** How many sessions, newest first, a listing searches and filters. */
export const SEARCHED_SESSIONS = 500;
/** How many audit records, newest first, the listing counts blocks in. */
const COUNTED_AUDIT = 10_000;

type Query = z.output<typeof SessionListQuery>;
type Item = z.input<typeof SessionListItemSchema>;
type Caller = Pick<FastifyRequest, "principal" | "admin">;

export const adminOnly = () => new HttpError(403, "permission_error", "admin_only", "Only an admin key may do this.");

/**
 * Sessions with their figures (principal, last activity, runs, blocks, size), newest activity
 * first: the caller's own, or — for an admin key with scope=all — every top-level session,
 * those `gatehouse run` made included. Search and filters apply to the newest
 * `SEARCHED_SESSIONS`, then the page is cut.
 */
export async function listSessions(
  ctx: ServerContext,
  caller: Caller,
  query: Query,
): Promise<{ data: Item[]; more: boolean }> {
  if (query.scope === "all" && !caller.admin) throw adminOnly();
  const { store } = ctx.gatehouse;
  let candidates: { session: Session; owner: SessionOwner | undefined; runs?: number; messages?: number }[];
  if (query.scope === "all") {
    const listed = await store.listSessions({ parentSessionId: null, limit: SEARCHED_SESSIONS });
    const owners = await ctx.records.sessionOwners(listed.map((s) => s.id));
    candidates = listed.map((s) => ({
      session: s,
      owner: owners.get(s.id),
      runs: s.runCount,
      messages: s.messageCount,
    }));
  } else {
    const owned = await ctx.records.ownedSessions(caller.principal, { limit: SEARCHED_SESSIONS, offset: 0 });
    const sessions = await Promise.all(owned.map((o) => store.getSession(o.sessionId)));
    candidates = owned.flatMap((owner, i) => {
      const session = sessions[i];
      return session ? [{ session, owner }] : [];
    });
    candidates.sort((a, b) => (a.session.updatedAt < b.session.updatedAt ? 1 : -1));
  }

  const blocks = new Map<string, number>();
  for (const record of await store.listAudit({ limit: COUNTED_AUDIT }))
    if (record.outcome === "block" && record.sessionId !== null)
      blocks.set(record.sessionId, (blocks.get(record.sessionId) ?? 0) + 1);

  const filtered = candidates.filter(({ session, owner }) => {
    if (query.principal !== undefined && owner?.principal !== query.principal) return false;
    if (query.blocked !== undefined && (blocks.get(session.id) ?? 0) > 0 !== query.blocked) return false;
    return true;
  });
  const needle = query.q?.trim().toLowerCase();
  const searching = needle !== undefined && needle !== "";
  // Titles as the CLI derives them: a search reads every candidate's, a page only its own.
  const titles = await consoleTitles(
    store,
    searching ? filtered : filtered.slice(query.offset, query.offset + query.limit),
  );
  const matching = searching
    ? filtered.filter(({ session }) =>
        [titles.get(session.id), session.id, session.key].some((text) => text?.toLowerCase().includes(needle)),
      )
    : filtered;
  const page = matching.slice(query.offset, query.offset + query.limit);
  const data = await Promise.all(
    page.map(async ({ session, owner, runs, messages }): Promise<Item> => {
      let figures = { runs, messages };
      if (runs === undefined || messages === undefined) {
        const detail = await store.showSession(session.id);
        figures = { runs: detail?.runs.length ?? 0, messages: detail?.messageCount ?? 0 };
      }
      return {
        id: session.id,
        key: session.key,
        title: titles.get(session.id) ?? null,
        createdAt: session.createdAt,
        updatedAt: session.updatedAt,
        principal: owner?.principal ?? null,
        runs: figures.runs ?? 0,
        blocks: blocks.get(session.id) ?? 0,
        messages: figures.messages ?? 0,
        lastActivityAt: session.updatedAt,
      };
    }),
  );
  return { data, more: matching.length > query.offset + query.limit };
}

/**
 * Sessions' titles as `sessions list` and the resume picker show them: the given one (the store's,
 * else one an older server kept with the owner), else the first stored prompt; one line.
 */
export function consoleTitles(
  store: StoreView,
  listed: readonly { session: Session; owner?: Pick<SessionOwner, "title"> | undefined }[],
): Promise<Map<string, string | null>> {
  const sessions = listed.map(({ session, owner }) => {
    const title = session.title ?? owner?.title ?? undefined;
    return { id: session.id, ...(title === undefined ? {} : { title }) };
  });
  return sessionTitles(store, sessions, (text) => oneLine(text, TITLE_CHARS));
}

import { useEffect, useState } from "preact/hooks";

/** Where the console is: `#/sessions`, `#/sessions/<id>`, `#/audit?<filters>`, `#/live`, `#/config`. */
export interface Route {
  readonly view: "sessions" | "session" | "audit" | "live" | "config";
  readonly id?: string;
  readonly params: URLSearchParams;
}

export function parseRoute(hash: string): Route {
  const [path = "", search = ""] = hash.replace(/^#/, "").split("?", 2);
  const params = new URLSearchParams(search);
  const parts = path.split("/").filter(Boolean);
  if (parts[0] === "sessions" && parts[1] !== undefined)
    return { view: "session", id: decodeURIComponent(parts[1]), params };
  if (parts[0] === "audit" || parts[0] === "live" || parts[0] === "config") return { view: parts[0], params };
  return { view: "sessions", params };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    addEventListener("hashchange", onChange);
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return route;
}

/** A link inside the console: always a fragment of this page, whatever the id holds. */
export function sessionHref(id: string): string {
  return `#/sessions/${encodeURIComponent(id)}`;
}

export function auditHref(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const text = q.toString();
  return text ? `#/audit?${text}` : "#/audit";
}

/**
 * A handler's result read once, as data. What a handler returns is not trusted to behave like
 * data: a getter may throw, answer differently the second time, or a Proxy may lie about its
 * keys. So the engine reads every result exactly once, right when the handler answers, into
 * plain objects and arrays (own enumerable string keys, each read once), and validates and
 * merges only that copy. A throw while reading makes the result invalid — the hook's failure
 * policy applies — and never reaches the run as an error.
 */

/** Why a result could not be read: no message of the handler's is kept, so none can be printed. */
export class UnreadableResult {
  constructor(readonly why: string) {}
}

/** The data in `value`, or why it is not data. */
export function readResult(value: unknown): unknown {
  try {
    return copy(value, []);
  } catch (error) {
    if (error instanceof UnreadableResult) return error;
    // A getter or a Proxy trap threw: what it threw is the handler's, and stays unread.
    return new UnreadableResult("reading it threw");
  }
}

function copy(value: unknown, ancestors: object[]): unknown {
  if (value === null) return null;
  switch (typeof value) {
    case "string":
    case "number":
    case "boolean":
    case "undefined":
      return value;
    case "object":
      break;
    default:
      throw new UnreadableResult(`it holds a ${typeof value}`);
  }
  const object = value as object;
  if (ancestors.includes(object)) throw new UnreadableResult("it refers to itself");
  ancestors.push(object);
  let out: unknown;
  if (Array.isArray(object)) {
    const length = object.length;
    const items: unknown[] = new Array(length);
    for (let i = 0; i < length; i++) items[i] = copy(object[i], ancestors);
    out = items;
  } else {
    const fields: Record<string, unknown> = {};
    for (const key of Object.keys(object)) {
      const field = copy((object as Record<string, unknown>)[key], ancestors);
      // A key such as "__proto__" is set as an own field, never as the prototype.
      if (key === "__proto__") Object.defineProperty(fields, key, { value: field, enumerable: true, writable: true });
      else fields[key] = field;
    }
    out = fields;
  }
  ancestors.pop();
  return out;
}

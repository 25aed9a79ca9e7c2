// Every text the console shows that it did not write itself — messages, titles, names, ids,
// configuration values — goes through <Inert>: it becomes text nodes (never markup: nothing in
// the console assigns innerHTML, and the page's Trusted Types policy would refuse it), and the
// characters that could make it read as something else are shown for what they are.

/**
 * Bidirectional embeddings, overrides, isolates and marks: they reorder what is displayed
 * (`exe.txt` read as `txt.exe`). Shown as a visible marker, so they cannot.
 */
function isBidiControl(code: number): boolean {
  return (
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069) ||
    code === 0x200e ||
    code === 0x200f ||
    code === 0x061c
  );
}

/** C0 and C1 controls and DEL, except newline and tab. */
function isControl(code: number): boolean {
  return (code < 0x20 && code !== 0x0a && code !== 0x09) || (code >= 0x7f && code <= 0x9f);
}

const hex = (code: number) => `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;

/** Text split into plain runs and the characters shown as markers. */
export function inertSegments(text: string): { text: string; marker: boolean }[] {
  const out: { text: string; marker: boolean }[] = [];
  let plain = "";
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (isBidiControl(code) || isControl(code)) {
      if (plain) out.push({ text: plain, marker: false });
      plain = "";
      out.push({ text: hex(code), marker: true });
    } else plain += ch;
  }
  if (plain) out.push({ text: plain, marker: false });
  return out;
}

export function Inert({ text, class: className }: { text: string | null | undefined; class?: string }) {
  const segments = inertSegments(text ?? "");
  return (
    <span class={className ? `inert ${className}` : "inert"} dir="ltr">
      {segments.map((s, i) =>
        s.marker ? (
          <span key={i} class="marker" title="an invisible control character, shown instead of applied">
            {`⟨${s.text}⟩`}
          </span>
        ) : (
          s.text
        ),
      )}
    </span>
  );
}

/** A JSON value as indented text (for tool inputs and outputs). */
export function jsonText(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

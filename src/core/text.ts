/** `text` as one line of at most `max` characters: whitespace runs as one space, trimmed, a cut marked `…`. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1))}…`;
}

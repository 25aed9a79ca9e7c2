/**
 * Freezes a value and everything reachable from it, stopping at anything already frozen.
 * Producers (the runtime, the store) freeze messages once when they create them, so a
 * dispatch carrying a 10,000-message history costs one `isFrozen` check, not a walk.
 * Precondition: whatever is already frozen is frozen all the way down. A shallowly frozen
 * object (`Object.freeze([mutableMessage])`) is taken as done and its insides stay mutable;
 * walking frozen subtrees instead would make every dispatch O(history).
 * Typed arrays cannot be frozen and are left as they are.
 *
 * Objects are walked with `for…in` (about a third cheaper per event than `Object.keys`): it
 * also reaches enumerable inherited properties, which a handler can read, so they are frozen too.
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") freezeObject(value);
  return value;
}

function freezeObject(value: object): void {
  if (Object.isFrozen(value) || ArrayBuffer.isView(value)) return;
  Object.freeze(value);
  for (const key in value) {
    const field: unknown = (value as Record<string, unknown>)[key];
    if (field !== null && typeof field === "object") freezeObject(field);
  }
}

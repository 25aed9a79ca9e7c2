/**
 * Freezes a value and everything reachable from it, stopping at anything already frozen.
 * Producers (the runtime, the store) freeze messages once when they create them, so a
 * dispatch carrying a 10,000-message history costs one `isFrozen` check, not a walk.
 * Precondition: whatever is already frozen is frozen all the way down. A shallowly frozen
 * object (`Object.freeze([mutableMessage])`) is taken as done and its insides stay mutable;
 * walking frozen subtrees instead would make every dispatch O(history).
 * Typed arrays cannot be frozen and are left as they are.
 */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value) || ArrayBuffer.isView(value)) return value;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}

import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/**
 * A CommonJS package, loaded on first use rather than at start-up: for packages only some runs
 * need (a glob library, a matcher). `require` gives the same module an `import` would, and
 * synchronously, so the callers stay as they are.
 */
export function lazyRequire<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= require(name) as T;
    return loaded;
  };
}

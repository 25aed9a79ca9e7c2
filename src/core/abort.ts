/**
 * A signal that aborts when any of `sources` does, like `AbortSignal.any`, but a plain one, and
 * unlinked from its sources by `release()`.
 *
 * Why not `AbortSignal.any`: Node keeps a composite signal that has an abort listener alive until
 * it aborts. One that never aborts (a run that ended normally, an approval answered in time) and
 * still has a listener nobody removed — the MCP SDK leaves one on every request's signal — is kept
 * for the life of the process, with everything that listener's closure holds (a whole run). A
 * plain signal is garbage with its last reference, listeners and all.
 */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Call when the work the signal was for has ended: the sources no longer reach it. */
  release(): void;
}

export function linkedSignal(sources: readonly AbortSignal[]): LinkedSignal {
  const controller = new AbortController();
  const aborted = sources.find((source) => source.aborted);
  if (aborted) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, release() {} };
  }
  const forward = (event: Event) => controller.abort((event.target as AbortSignal).reason);
  for (const source of sources) source.addEventListener("abort", forward, { once: true });
  return {
    signal: controller.signal,
    release() {
      for (const source of sources) source.removeEventListener("abort", forward);
    },
  };
}

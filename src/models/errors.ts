import { maskSecrets } from "../core/secrets.js";

/**
 * A model spec (or the scripted model file it names) cannot be turned into a model. Thrown by
 * `resolveModel`, before any model call, so the CLI can report it as a configuration error.
 * A spec's base URL may carry a password: the message and `spec` have it masked.
 */
export class ModelSpecError extends Error {
  override readonly name: string = "ModelSpecError";
  readonly spec: string;
  constructor(message: string, spec: string) {
    super(maskSecrets(message));
    this.spec = maskSecrets(spec);
  }
}

/** The scripted model file exists but its content is not a valid script. */
export class ScriptedFileError extends ModelSpecError {
  override readonly name = "ScriptedFileError";
}

/**
 * A scripted model was asked something its script does not answer (no matching run, no turn
 * left). Not an `APICallError`: it is a mistake in the test or demo, never worth a retry.
 */
export class ScriptedModelError extends Error {
  override readonly name = "ScriptedModelError";
}

import { messageText } from "../core/message.js";
import { collectStream } from "../models/collect.js";
import type { ModelResolver } from "./deps.js";

/**
 * The model call of a `prompt` command hook: the configured model, or the spec the handler
 * names. It goes straight to the provider, outside any run: no hook sees it (a hook's own
 * evaluation must not fire hooks), and it is not stored.
 */
export function hookModelCall(models: ModelResolver) {
  return async (request: {
    readonly model: string | undefined;
    readonly system: string;
    readonly prompt: string;
    readonly signal: AbortSignal;
  }): Promise<string> => {
    const { model } = await models.resolve(request.model === undefined ? undefined : { modelOverride: request.model });
    const { stream } = await model.doStream({
      prompt: [
        { role: "system", content: request.system },
        { role: "user", content: [{ type: "text", text: request.prompt }] },
      ],
      abortSignal: request.signal,
    });
    return messageText(await collectStream(stream));
  };
}

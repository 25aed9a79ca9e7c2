/**
 * A tool's output in the shape Claude Code's hooks read as `tool_response`, where Gatehouse's
 * own shape differs. Keys Gatehouse adds (Bash's `exitCode`) stay: payloads are a superset.
 */
export function claudeToolResponse(toolName: string, output: unknown): unknown {
  if (toolName === "Bash" && isBashOutput(output)) {
    const stdout = withoutFinalNewlines(output.stdout);
    const stderr = withoutFinalNewlines(output.stderr);
    return {
      ...output,
      stdout,
      stderr,
      isImage: false,
      // Claude Code predicts this from the command; Gatehouse reports what happened.
      noOutputExpected: stdout === "" && stderr === "",
    };
  }
  return output;
}

interface BashOutput {
  readonly stdout: string;
  readonly stderr: string;
}

function isBashOutput(output: unknown): output is BashOutput {
  if (typeof output !== "object" || output === null) return false;
  const o = output as Record<string, unknown>;
  return typeof o.stdout === "string" && typeof o.stderr === "string";
}

/** Claude Code's Bash result drops the output's final line breaks. */
const withoutFinalNewlines = (text: string) => text.replace(/\n+$/, "");

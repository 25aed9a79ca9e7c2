#!/bin/sh
# The same policy as withhold-secrets.ts, as a Claude Code command hook on PostToolUse and
# PostToolUseFailure. stdin is the event as JSON, with the tool's output in tool_response (or, for
# a call that failed, in error). A JSON answer with "decision": "block" withholds the output:
# Gatehouse replaces it with a notice before the model, the store or the terminal sees it.
# (Claude Code itself only shows the reason to the model, the output already in the
# conversation; and it cannot withhold a failure at all — that is a Gatehouse extension.)
input=$(cat)
if printf '%s' "$input" | grep -Eqi 'AKIA[0-9A-Z]{16}|aws_secret_access_key *[=:]|-----BEGIN [A-Z ]*PRIVATE KEY-----|password *[=:]'; then
  printf '%s\n' '{"decision": "block", "reason": "The output contained credentials and was withheld"}'
fi
exit 0

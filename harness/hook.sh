#!/bin/sh
# The R1 command hook (Claude Code protocol). Appends the payload it received to $HOOK_LOG, then
# every canary the transcript it was handed holds at that moment (one a line), then decides by
# content markers: UserPromptSubmit rejects BLOCK-UPS; PostToolUse and PostToolUseFailure
# withhold BLOCK-PTU. Plain sh with as few processes as possible: a hook runs on every event.
IFS= read -r payload
transcript=${payload#*\"transcript_path\":\"}
transcript=${transcript%%\"*}
printf '%s\n' "$payload" >> "$HOOK_LOG"
[ -f "$transcript" ] && grep -o 'CANARY-[A-Za-z0-9-]*' "$transcript" >> "$HOOK_LOG"
case "$payload" in
  *'"hook_event_name":"UserPromptSubmit"'*)
    case "$payload" in *BLOCK-UPS*)
      printf '%s' "The prompt hook rejected this prompt." >&2
      exit 2 ;;
    esac ;;
  *'"hook_event_name":"PostToolUse"'*|*'"hook_event_name":"PostToolUseFailure"'*)
    case "$payload" in *BLOCK-PTU*)
      printf '{"decision":"block","reason":"the output held a secret"}\n'
      exit 0 ;;
    esac ;;
  *'"hook_event_name":"SessionStart"'*)
    printf 'SESSION-START-CONTEXT\n' ;;
esac
exit 0

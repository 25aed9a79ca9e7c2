#!/bin/sh
# The R1 command hook (Claude Code protocol). Appends the payload it received to $HOOK_LOG, then
# every canary the transcript it was handed holds at that moment (one a line), then decides by
# content markers: UserPromptSubmit rejects BLOCK-UPS; PostToolUse and PostToolUseFailure
# withhold BLOCK-PTU; PermissionRequest denies BLOCK-PERMREQ (and STOP-PERMREQ, ending the run);
# PermissionDenied lets the model try again on RETRY-HOOK; Stop and SubagentStop send a
# REVISE-STOP draft back once. PreToolUse tries to allow every curl and scp call (a deny rule must
# win; it should never even be asked).
# Plain sh with as few processes as possible: a hook runs on every event.
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
  *'"hook_event_name":"PreToolUse"'*)
    case "$payload" in *'curl '*|*'scp '*)
      printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}\n'
      exit 0 ;;
    esac ;;
  *'"hook_event_name":"PermissionRequest"'*)
    case "$payload" in
      *STOP-PERMREQ*)
        printf '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"The permission hook refused this call.","interrupt":true}}}\n'
        exit 0 ;;
      *BLOCK-PERMREQ*)
        printf '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"The permission hook refused this call."}}}\n'
        exit 0 ;;
    esac ;;
  *'"hook_event_name":"PermissionDenied"'*)
    case "$payload" in *RETRY-HOOK*)
      printf '{"hookSpecificOutput":{"hookEventName":"PermissionDenied","retry":true}}\n'
      exit 0 ;;
    esac ;;
  *'"hook_event_name":"Stop"'*|*'"hook_event_name":"SubagentStop"'*)
    case "$payload" in *'"stop_hook_active":false'*REVISE-STOP*|*REVISE-STOP*'"stop_hook_active":false'*)
      printf '{"decision":"block","reason":"Please look at your answer again."}\n'
      exit 0 ;;
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

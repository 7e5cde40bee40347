// A claude look-alike for tmux tests of the screen detector: it draws what the real claude shows
// (reference/real-agents.md §2) and changes screen on the lines it reads:
//   (start), any other line   idle: "● <line>", the prompt box (❯ between two rules), "? for shortcuts"
//   work …                    working: spinner title "⠐ Working", "✻ Pondering… (esc to interrupt)"
//   ask <command>             blocked: claude's Bash permission dialog for <command>
//   /exit                     leaves
// Install it as `claude` in the sandbox's bin (mam starts `claude --session-id …`; it ignores args).
export const CLAUDE_LOOKALIKE = `#!/usr/bin/env bash
stty -echo 2>/dev/null
R=$(printf '─%.0s' $(seq 1 60))
draw() { printf '\\033[H\\033[2J\\033]0;%s\\007' "$1"; shift; printf '%s\\n' "$@"; }
idle() { draw "✳ Claude Code" "● \${1:-ready}" "" "$R" "❯ " "$R" "  ? for shortcuts"; }
idle
while IFS= read -r line; do
  case "$line" in
    work*) draw "⠐ Working" "● on it" "" "✻ Pondering… (esc to interrupt)" "" "$R" "❯ " "$R" ;;
    "ask "*) c=\${line#ask }; draw "✳ Claude Code" "● Bash($c)" "" "$R" " Bash command" "" "   $c" "   Run it" "" " Do you want to proceed?" " ❯ 1. Yes" "   2. No" ;;
    /exit) exit 0 ;;
    *) idle "$line" ;;
  esac
done
`;

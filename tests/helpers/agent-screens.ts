// A claude look-alike for tmux tests of the screen detector: it draws what the real claude shows
// (reference/real-agents.md §2, tests/fixtures/screens/claude/*-real-*) and changes screen on the
// lines it reads:
//   (start), any other line   idle: "● <line>", the prompt box (❯ between two rules), "? for shortcuts"
//   work …                    working: spinner title "⠐ Working", "✻ Pondering… (esc to interrupt)"
//   ask <command>             blocked: claude 2.1's Bash permission dialog for <command>, which, as the
//                             real one, takes one key: 1 runs it, 2 runs it and "don't ask again",
//                             3 or Esc is the no ("Interrupted · What should Claude do instead?")
//   /exit                     leaves
// Install it as `claude` in the sandbox's bin (mam starts `claude --session-id …`, which it ignores).
export const CLAUDE_LOOKALIKE = `#!/usr/bin/env bash
stty -echo 2>/dev/null
R=$(printf '─%.0s' $(seq 1 60))
draw() { printf '\\033[H\\033[2J\\033]0;%s\\007' "$1"; shift; printf '%s\\n' "$@"; }
idle() { draw "✳ Claude Code" "● \${1:-ready}" "" "$R" "❯ " "$R" "  ? for shortcuts"; }
ask() {
  draw "✳ Claude Code" "● Bash($1)" "  ⎿  Waiting…" "" "$R" " Bash command" "" "   $1" "   Run it" "" " Do you want to proceed?" " ❯ 1. Yes" \\
    "   2. Yes, and don't ask again for $1 commands in $PWD" "   3. No" "" " Esc to cancel · Tab to amend · ctrl+e to explain"
  while IFS= read -rsn1 k; do
    case "$k" in
      1) idle "Bash($1) ran"; return ;;
      2) idle "Bash($1) ran; don't ask again"; return ;;
      3 | $'\\e') idle "Interrupted · What should Claude do instead?"; return ;;
    esac
  done
}
idle
while IFS= read -r line; do
  case "$line" in
    work*) draw "⠐ Working" "● on it" "" "✻ Pondering… (esc to interrupt)" "" "$R" "❯ " "$R" ;;
    "ask "*) ask "\${line#ask }" ;;
    /exit) exit 0 ;;
    *) idle "$line" ;;
  esac
done
`;

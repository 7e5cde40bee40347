// shell: a plain bash in a pane, for scripts (it has no conversation, no prompt mam reads). bash
// runs every line typed into it, so it reads commands, not prose: a job to it is a command (its
// prompt, or its brief file as a script) that `mam shell-job` runs and reports on (lib/ops/job/
// shell-run.ts), and mam types nothing else into it: no onboarding, no loop texts, no notices.
import type { AgentKind } from "./kind.ts";

export const shell: AgentKind = {
  kind: "shell",
  exe: "bash",
  command: null,
  herdrKind: null,
  freshArgs: () => ["--noprofile", "--norc"],
  assignsId: false,
  resumeArgs: null,
  resumeNote: null,
  startDialog: null,
  resumeLoaded: null,
  exitText: "exit",
  reads: "commands",
  store: null,
  // no screen rules: a shell's screen says nothing mam could read as idle or working
  screenRules: null,
  hooks: null,
  // none needed: a shell asks nothing before a command
  grants: null,
  mcp: null,
  // it calls no model itself: mam has no tokens to count (shown as unknown, never as 0)
  usage: null,
  limits: null,
  continueAtReset: null,
};

// shell: a plain bash in a pane, for scripts (it has no conversation, no prompt mam reads).
import type { AgentKind } from "./kind.ts";

export const shell: AgentKind = {
  kind: "shell",
  exe: "bash",
  command: null,
  herdrKind: null,
  freshArgs: () => ["--noprofile", "--norc"],
  assignsId: false,
  resumeArgs: null,
  exitText: "exit",
  store: null,
  // no screen rules: a shell's screen says nothing mam could read as idle or working
  screenRules: null,
  hooks: null,
  // none needed: a shell asks nothing before a command
  grants: null,
  mcp: null,
};

// aider: everything mam knows about this kind. herdr does not know it: mam types its command into
// a pane. It cannot resume a conversation mam could name, and keeps none mam discovers.
import type { AgentKind } from "./kind.ts";

export const aider: AgentKind = {
  kind: "aider",
  exe: "aider",
  command: null,
  herdrKind: null,
  freshArgs: () => [],
  assignsId: false,
  // no resume by id: mam starts it fresh
  resumeArgs: null,
  resumeNote: null,
  startDialog: null,
  resumeLoaded: null,
  exitText: "/exit",
  reads: "prose",
  store: null,
  screenRules: "aider.screen.json",
  // no hooks: mam sees its state on its screen only
  hooks: null,
  // none: not verified which of its options would allow one command; the user allows mam's
  // commands in its own settings (docs/sessions.md, "Permissions mam grants")
  grants: null,
  // `mam create --mcp` and `mam mcp install` know claude's and codex's config only
  mcp: null,
  // mam does not read its records yet: its usage shows as unknown (docs/cost.md)
  usage: null,
  limits: null,
  continueAtReset: null,
};

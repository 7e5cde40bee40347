// demo: mam's own scripted agent (`mam demo-agent`, lib/agents/demo-agent.ts) for the demo and the
// tour. Its command is this mam itself; it keeps no conversations, so it starts fresh each time.
import { selfCommand } from "../../sys/self.ts";
import type { AgentKind } from "./kind.ts";

export const demo: AgentKind = {
  kind: "demo",
  exe: "mam",
  command: () => [...selfCommand(), "demo-agent"],
  herdrKind: null,
  freshArgs: () => [],
  assignsId: false,
  resumeArgs: null,
  resumeNote: null,
  exitText: "/exit",
  reads: "prose",
  store: null,
  screenRules: "demo.screen.json",
  // no hooks: mam sees its state on its screen only
  hooks: null,
  // none needed: it runs mam's commands itself, without asking anyone
  grants: null,
  // it takes no MCP config (it is not a model client)
  mcp: null,
  // it calls no model itself: mam has no tokens to count (shown as unknown, never as 0)
  usage: null,
};

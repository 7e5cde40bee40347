// demo: mam's own scripted agent (`mam demo-agent`, lib/agents/demo-agent.ts) for the demo and the
// tour. Its command is this mam itself; it keeps no conversations, so it starts fresh each time.
// It calls no model, but so that budgets, the COST column and the dashboard's cost cells can be
// tried without an account it writes SYNTHETIC usage, labelled as such (model
// `mam-demo-synthetic`), to `<ws>/.mam/demo-usage/<session>.ndjson`, which its `usage` reads.
import { join } from "node:path";
import { isValidName } from "../../sys/names.ts";
import { selfCommand } from "../../sys/self.ts";
import { countOf, jsonObject, stamp, type UsageFact, type UsageSource } from "../usage.ts";
import type { AgentKind } from "./kind.ts";

/** the model name of the demo agent's made-up answers (priced in lib/cost/prices.json) */
export const DEMO_MODEL = "mam-demo-synthetic";

/** where the demo agent of session `name` writes its synthetic usage */
export function demoUsageFile(ws: string, name: string): string {
  return join(ws, ".mam", "demo-usage", `${name}.ndjson`);
}

/** one line of a demo usage file: a prompt it took (a turn), or one made-up answer */
export function demoUsageLine(line: string): UsageFact | undefined {
  const o = jsonObject(line);
  if (!o || o.synthetic !== true) return undefined;
  if (o.demo_usage === "turn" && typeof o.text === "string") return { kind: "turn", at: stamp(o.at), text: o.text };
  if (o.demo_usage === "answer") {
    const tokens = { input: countOf(o.input), output: countOf(o.output), cache_write: 0, cache_read: 0 };
    if (tokens.input + tokens.output === 0) return undefined;
    return { kind: "answer", at: stamp(o.at), model: DEMO_MODEL, ...(typeof o.id === "string" ? { id: o.id } : {}), tokens };
  }
  return undefined;
}

const usage: UsageSource = {
  // a session name mam would refuse never names a file
  files: ({ ws, name }) => (isValidName(name) ? [demoUsageFile(ws, name)] : []),
  markers: ['"demo_usage"'],
  parse: demoUsageLine,
};

export const demo: AgentKind = {
  kind: "demo",
  exe: "mam",
  command: () => [...selfCommand(), "demo-agent"],
  herdrKind: null,
  freshArgs: () => [],
  assignsId: false,
  resumeArgs: null,
  resumeNote: null,
  startDialog: null,
  resumeLoaded: null,
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
  // it calls no model; the usage it writes is synthetic (model mam-demo-synthetic), for trying
  // budgets and costs without an account
  usage,
  limits: null,
  continueAtReset: null,
};

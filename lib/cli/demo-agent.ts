// mam demo-agent: the scripted agent `mam demo` runs in its panes (hidden)
import { runDemoAgent } from "../agents/demo-agent.ts";
import { usageError } from "../sys/errors.ts";
import { out } from "../sys/io.ts";
import { defineCommand, str } from "./command.ts";

export default defineCommand({
  meta: {
    name: "demo-agent",
    description: "a tiny scripted agent for the demo: reads prompts from its terminal and reports job events with mam job event",
    hidden: true,
    examples: ["mam demo-agent --role worker", "mam demo-agent --role reviewer --pass-on 2", "mam demo-agent --role worker --dialog"],
  },
  args: {
    role: { type: "enum", options: ["worker", "reviewer"], description: "what its banner calls it (it does jobs and reviews loop jobs whatever it is called)" },
    "pass-on": { type: "string", default: "2", description: "a reviewer answers PASS on this review and feedback before it", valueHint: "N" },
    "think-ms": { type: "string", default: "300", description: "pause before each event, so the timeline is readable", valueHint: "MS" },
    dialog: { type: "boolean", default: false, description: "a worker asks in a permission dialog before its job's command (answer it with mam approve), as a real agent does" },
  },
  async run({ args }) {
    const passOn = Number(str(args, "pass-on"));
    const thinkMs = Number(str(args, "think-ms"));
    if (!Number.isInteger(passOn) || passOn < 1) throw usageError("--pass-on must be a whole number >= 1");
    if (!Number.isInteger(thinkMs) || thinkMs < 0) throw usageError("--think-ms must be a whole number of milliseconds");
    return runDemoAgent({ role: str(args, "role") as "worker" | "reviewer" | undefined, passOn, thinkMs, dialog: args.dialog === true, print: (l) => out(l) });
  },
});

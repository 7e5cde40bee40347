// The SKILL.md texts, embedded in the binary.
import create from "./skills/multi-agent-mux-create.md" with { type: "text" };
import stop from "./skills/multi-agent-mux-stop.md" with { type: "text" };
import resume from "./skills/multi-agent-mux-resume.md" with { type: "text" };
import status from "./skills/multi-agent-mux-status.md" with { type: "text" };
import monitor from "./skills/multi-agent-mux-monitor.md" with { type: "text" };
import delegate from "./skills/multi-agent-mux-delegate-job.md" with { type: "text" };

export const SKILLS: Record<string, string> = {
  "multi-agent-mux-create": create,
  "multi-agent-mux-stop": stop,
  "multi-agent-mux-resume": resume,
  "multi-agent-mux-status": status,
  "multi-agent-mux-monitor": monitor,
  "multi-agent-mux-delegate-job": delegate,
};

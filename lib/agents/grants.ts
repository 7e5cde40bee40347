// What mam pre-approves in the agents it starts: its own reporting commands, nothing more. The
// job header tells the agent to run `<mam> job event …` (and the onboarding `<mam> status`); an
// agent that asks before each of them stalls every job at a permission dialog. claude takes
// allow rules as start arguments; the other kinds get none (docs/sessions.md says what each
// needs). `mam create --no-grant` leaves them out, and the row remembers it for resume.
import { agentMam } from "../sys/agent-mam.ts";
import type { Env } from "../sys/paths.ts";

/** the mam subcommands an agent may run without asking (reporting and reading, no side effects elsewhere) */
export const GRANTED_COMMANDS = ["job event", "job status", "status"] as const;

/** claude's allow rules for mam's commands, as the header writes them (`mam` = agentMam) */
export function claudeRules(mam: string): string[] {
  return GRANTED_COMMANDS.map((c) => `Bash(${mam} ${c}:*)`);
}

/**
 * the start arguments that grant a kind mam's commands. claude: one `--allowedTools=RULE` each
 * (the `=` form: `--allowedTools` takes several values and would swallow an argument that
 * follows it, such as the user's prompt). Other kinds: none.
 */
export function grantArgs(kind: string, env: Env = process.env, mam: string = agentMam(env)): string[] {
  if (kind !== "claude") return [];
  return claudeRules(mam).map((r) => `--allowedTools=${r}`);
}

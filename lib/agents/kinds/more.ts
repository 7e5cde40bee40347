// Kinds written from their CLIs' own docs (the npm packages' README and --help), not yet run by mam:
// GitHub Copilot CLI, Crush, Kilo Code and Amp. They are unverified (index.ts, VERIFIED): `mam
// create` says so once, and docs/sessions.md's kinds table says what each entry rests on. None has
// screen rules, so mam cannot see their prompt or dialogs on tmux (herdr reports the state of the
// kinds it knows: copilot, kilo, amp). Where their docs name no resume argument or exit command,
// the entry says none (mam starts them fresh; stop closes the pane).
import { type AgentKind, GRANTED_COMMANDS } from "./kind.ts";

/** the parts every entry here leaves out: no resume note, no store, no screen rules, no hooks, no MCP, no usage (not verified) */
const UNSEEN = { command: null, resumeNote: null, startDialog: null, resumeLoaded: null, store: null, screenRules: null, hooks: null, mcp: null, usage: null, limits: null, continueAtReset: null } as const;
/** each is an agent that reads the texts mam types (none is a shell) */
const PROSE = { reads: "prose" } as const;

// @github/copilot 1.0.102, `copilot --help` and `copilot help permissions`: --session-id sets the
// UUID of a new session, --resume <id> resumes one, /exit leaves; --allow-tool takes
// `shell(<command>:*)` prefix rules. Its conversations live under $COPILOT_HOME (~/.copilot) in a
// layout its docs do not describe.
export const copilot: AgentKind = {
  ...UNSEEN,
  ...PROSE,
  kind: "copilot",
  exe: "copilot",
  herdrKind: "copilot",
  freshArgs: (id) => (id ? ["--session-id", id] : []),
  assignsId: true,
  resumeArgs: (id) => ["--resume", id],
  exitText: "/exit",
  grants: (mam) => GRANTED_COMMANDS.map((c) => `--allow-tool=shell(${mam} ${c}:*)`),
};

/**
 * a kind whose docs name only its command: started fresh (no resume argument, no id), nothing
 * to type to make it leave (stop closes its pane), no grant
 */
function commandOnly(kind: string, herdrKind: string | null): AgentKind {
  return { ...UNSEEN, ...PROSE, kind, exe: kind, herdrKind, freshArgs: () => [], assignsId: false, resumeArgs: null, exitText: null, grants: null };
}

// @charmland/crush 0.96.1, its README: sessions are picked in its session manager (no resume
// argument), permissions are allowed in its config (`permissions allow …`, no start argument),
// and it names no exit command. herdr 0.8 has no crush kind: mam types its command into a pane.
export const crush = commandOnly("crush", null);

// @kilocode/cli 7.8.1, its README: `kilo` starts the TUI in the folder; sessions are listed with
// `kilo session list` (no resume argument named), and no exit command or permission argument is.
export const kilo = commandOnly("kilo", "kilo");

// Amp (@ampcode/cli; @sourcegraph/amp is an alias of it): the npm package holds only an installer
// for a native binary, no docs of its arguments. herdr knows it (`agent start --kind amp`).
export const amp = commandOnly("amp", "amp");

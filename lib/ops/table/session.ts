// The session operations: create, stop, resume, status, prune, send. Each entry is the one
// definition of its input, its text and how the command line and MCP name it; the use cases live
// in lib/ops/session/ and load only when the operation runs (so does the kinds table).
import * as z from "zod/mini";
import { BOARD_COLUMNS } from "../../jobs/statuses.ts";
import type { Board } from "../job/board.ts";
import { choice, count, flag, list, name, optional, sessionName, text, usd, withDefault } from "../input.ts";
import type { Answered } from "../session/approve.ts";
import { isValidJobId } from "../../sys/names.ts";
import { isValidAddress } from "../../team/host.ts";
import type { RosterDoc } from "../team.ts";
import { hasUnsafe } from "../../sys/sanitize.ts";
import { defineOp } from "../op.ts";
import { int, questionOut, rosterOut, str, strOrNull, usageOut, warnings } from "../results.ts";
import { usageError } from "../../sys/errors.ts";
import { field } from "../../sys/fields.ts";
import type { CreateOutcome } from "../session/create.ts";
import type { Pruned } from "../session/prune.ts";
import { answeredText, continuedText, createdText, prunedText, resumedAllText, resumedText, stoppedAllText, stoppedText } from "../session/render.ts";
import type { ResumedAll } from "../session/resume-all.ts";
import { checkCreate, checkStop } from "../session/rules.ts";
import type { Resumed } from "../session/resume.ts";
import type { ResumedLimited } from "../session/limit-resume.ts";
import type { Sent } from "../session/send.ts";
import { needsText, renderStatus, type StatusDoc } from "../session/status.ts";
import type { NeedItem } from "../session/why.ts";
import type { Stopped } from "../session/stop.ts";
import type { StoppedAll } from "../session/stop-all.ts";
import { allRows } from "../../registry/rows.ts";

const kinds = () => require("../../agents/kinds/index.ts") as typeof import("../../agents/kinds/index.ts");

/** a pane id as `mam status` shows it (tmux %3, herdr w1:p2): how stop and resume reach a row whose name mam would refuse */
const paneId = () =>
  z.string().check(
    z.regex(/^[%A-Za-z0-9:._-]{1,64}$/, { error: (iss) => `invalid pane id '${String(iss.input).slice(0, 40)}' (as mam status shows it: %3, w1:p2)` }),
    z.describe("the pane the session's row records, instead of its name (as `mam status` shows it: %3, w1:p2)"),
  );

/** stop and resume act on one row: named, or by its pane */
function oneRow(i: { name?: string; pane?: string }): void {
  if ((i.name === undefined) === (i.pane === undefined)) throw usageError(`give exactly one of ${field("name")} and ${field("pane")}`);
}

export const sessionCreate = defineOp({
  name: "session.create",
  summary: "start an agent in its own pane (herdr) or session (tmux) and register it in .mam/agent-sessions.yaml",
  readOnly: false,
  input: () => ({
    agent: text(`agent kind: ${kinds().kindNames().join(", ")}`, { max: 40 }),
    role: withDefault(text("the session's role, e.g. worker or reviewer (free text, immutable once set)", { max: 64, oneLine: true }), "creator"),
    max_running: optional(count("refuse (exit 4) when this many sessions of its role run already: a cap of running agents per role", 1, 10_000)),
    name: optional(sessionName("session name (default <workspace slug>-<role>-<agent>)")),
    mux: optional(choice(["herdr", "tmux"], "herdr or tmux (default: MAM_MUX, else herdr when installed, else tmux)")),
    herdr_server: optional(name("herdr server name", "herdr server to create the pane on (default: the one you run in, else default)")),
    tmux_server: optional(name("tmux server name", "private tmux server (tmux -L NAME; default: MAM_TMUX_SERVER, else the one this workspace remembers, else mam); the workspace remembers it for its later creates")),
    start_server: withDefault(flag("start the herdr server (headless, detached) when it is not running"), false),
    onboard: withDefault(flag("type the onboarding message into the new agent (default true)"), true),
    submit_job: optional(text("a job (its text) to submit to the new session right away")),
    worktree: optional(
      z.string().check(z.describe("run the agent in its own git worktree <workspace>/.mam/worktrees/<session> on branch BRANCH (left out or empty: the session name); an existing branch is continued")),
    ),
    base: optional(text("with {{worktree}}: the commit a new branch starts from (default: the workspace's HEAD)")),
    mcp: withDefault(flag("give the agent mam's MCP tools (claude: --mcp-config; codex: -c mcp_servers.mam…); claude may call the read-only ones and job_cancel without asking you, and asks before each other one"), false),
    mcp_all_tools: withDefault(
      flag("with {{mcp}}: let claude call every mam tool without asking you, session_create, job_submit and session_approve too (a RISK: it can then run commands through a shell session and answer other agents' dialogs; see docs/security.md)"),
      false,
    ),
    grant: withDefault(flag("pre-approve mam's own reporting commands in the agent (claude: --allowedTools for `mam job event`, `mam job status`, `mam status`; default true); resume keeps the choice"), true),
    agent_args: withDefault(list("the agent's own extra command-line arguments"), []),
    daily_budget_usd: optional(usd("a daily cap in US dollars: past it (per UTC day), its jobs stop with budget_exceeded and it gets no new job (docs/cost.md)")),
    daily_max_tokens: optional(count("a daily cap in tokens (per UTC day), as {{daily_budget_usd}}", 1, 1e12)),
    restart: withDefault(
      choice(["no", "on-failure"], "on-failure: when the agent's process dies (not a mam stop), the daemon resumes its conversation as mam resume does, at most {{max_restarts}} times an hour (docs/unattended.md#dead-agents); no (default): it stays terminated"),
      "no",
    ),
    max_restarts: optional(count("with {{restart}} on-failure: restarts within an hour before the daemon gives up and notifies you (default 3)", 1, 100)),
    sandbox: optional(choice(["none", "bwrap"], "bwrap: the agent runs in a bubblewrap sandbox: its worktree (or the workspace) read-write, its own config read-write, the system read-only, nothing else of yours (docs/sandbox.md); none: as you (default: MAM_SANDBOX, else none)")),
    net: optional(choice(["none", "model", "all"], "with {{sandbox}} bwrap: the network inside: model (default: MAM_SANDBOX_NET, else model) reaches only the model's endpoint and {{allow}}'s, none nothing, all everything")),
    allow: optional(list("with {{net}} model: another endpoint HOST:PORT the agent may reach")),
    on_limit: optional(
      choice(
        ["wait", "resume", "failover"],
        "at a usage limit: wait (default; mam does nothing), resume (type the agent's own continue once the limit has reset, a few times a day at most), or failover (its current job goes to a free agent of its role, else any)",
      ),
    ),
  }),
  check(i) {
    const k = kinds().agentKind(i.agent);
    checkCreate(i);
    if (i.restart === "on-failure" && !k.resumeArgs) throw usageError(`${i.agent} sessions cannot be resumed, so they cannot restart`, `leave out ${field("restart", "on-failure")}`);
  },
  async run(deps, i, ctx) {
    const { max_running, ...input } = i;
    // the workspace's cap (MAM_MAX_RUNNING) and the role's: never more agents than the machine holds
    const { refuseOverCap } = await import("../session/cap.ts");
    refuseOverCap(deps.registry.read(), deps.env, i.role, max_running);
    const { createAndFollowUp } = await import("../session/create.ts");
    return createAndFollowUp(deps, input, undefined, {}, ctx.signal);
  },
  // Ctrl-C / SIGTERM: the create finishes its row or closes what it started, then exits 130 / 143
  interruptible: true,
  text: (c: CreateOutcome) => createdText(c),
  result: () =>
    z.looseObject({
      name: str(),
      agent: str(),
      role: str(),
      mux: z.enum(["herdr", "tmux"]),
      server: str(),
      pane: str(),
      adopted: z.boolean(),
      session_id: strOrNull(),
      job_id: strOrNull(),
      daemon_pid: z.nullable(int()),
      /** the same as daemon_pid (its name before; kept for compatibility) */
      watchdog_pid: z.nullable(int()),
      start_command: str(),
      warnings: warnings(),
    }),
  cli: {
    path: "create",
    group: "agents",
    rest: "agent_args",
    flags: {
      agent: { valueHint: "KIND" },
      role: { valueHint: "ROLE" },
      name: { flag: "session", valueHint: "NAME" },
      mux: { valueHint: "herdr|tmux" },
      herdr_server: { flag: "herdr-session", valueHint: "SERVER" },
      tmux_server: { valueHint: "NAME" },
      onboard: { negated: true, description: "do not type the onboarding message into the new agent" },
      submit_job: { valueHint: "TEXT" },
      daily_budget_usd: { valueHint: "USD" },
      daily_max_tokens: { valueHint: "N" },
      restart: { valueHint: "POLICY" },
      max_restarts: { valueHint: "N" },
      on_limit: { valueHint: "MODE" },
      sandbox: { valueHint: "none|bwrap" },
      net: { valueHint: "none|model|all" },
      allow: { valueHint: "HOST:PORT" },
      worktree: { optionalValue: "", optionalValuePattern: /^[^-]/, valueHint: "BRANCH" },
      base: { valueHint: "REF" },
      grant: {
        negated: true,
        description: "do not pre-approve mam's own commands in the agent (claude: --allowedTools for `mam job event`, `mam job status`, `mam status`); resume keeps this",
      },
    },
    examples: [
      "mam create --agent claude --role worker",
      "mam create --agent codex --role reviewer --session api-review --herdr-session mam --start-server",
      "mam create --agent gemini --mux tmux --role worker",
      'mam create --agent claude --role worker --submit-job "Fix the failing test in api/"',
      "mam create --agent claude --role worker --session feat-x --worktree        # its own git worktree on branch feat-x",
      "mam create --agent codex --role worker --worktree fix/login --base main",
      "mam create --agent claude --role worker -- --model opus     # after --: the agent's own arguments",
      "mam create --agent claude --role lead --mcp                 # with mam's MCP tools (see mam mcp)",
      "mam create --agent claude --role lead --mcp --mcp-all-tools # none of them asks you first (a risk: docs/security.md)",
      "mam create --agent claude --role worker --no-grant          # claude asks before each mam command too",
      "mam create --agent claude --role worker --daily-budget-usd 20   # its jobs stop past $20 a day",
      "mam create --agent claude --role worker --mux tmux --worktree --sandbox bwrap   # sees its worktree, reaches only its model",
    ],
  },
  // an agent does not pre-approve every tool for the agents it starts: that choice is the user's
  mcp: { aliases: ["create_agent"], hide: ["mcp_all_tools"], description: "Start a new coding agent (claude, codex, …) in its own pane, register it, and optionally hand it a first job; returns its session name." },
});

export const sessionStop = defineOp({
  name: "session.stop",
  summary: "stop an agent session: graceful (resumable), --hard, or --soft (archive, leave the pane)",
  readOnly: false,
  input: () => ({
    name: optional(sessionName("session name, as `mam status` lists it (or give {{pane}})")),
    pane: optional(paneId()),
    mode: withDefault(choice(["graceful", "hard", "soft"], "graceful (the agent exits, resumable later), hard (close its pane now) or soft (archive the row, leave the pane)"), "graceful"),
    reason: withDefault(text("why (stored as stop_reason)", { max: 500 }), "requested"),
    purge: withDefault(flag("with {{mode=hard}}: delete this session's own conversation files in this workspace"), false),
    remove_worktree: withDefault(flag("also remove the session's git worktree (its branch stays); refused with uncommitted or unmerged work"), false),
    force: withDefault(flag("with {{remove_worktree}}: remove it even with uncommitted or unmerged work"), false),
    all: withDefault(flag("every running session (of {{role}}), one at a time, in name order (the other half of resume --all)"), false),
    role: optional(text("with {{all}}: only the sessions of this role", { max: 64, oneLine: true })),
  }),
  check(i) {
    if (i.all) {
      if (i.name !== undefined || i.pane !== undefined) throw usageError(`${field("all")} stops every running session: no ${field(i.name !== undefined ? "name" : "pane")}`);
    } else if (i.role !== undefined) throw usageError(`${field("role")} goes with ${field("all")}`);
    else oneRow(i);
    checkStop(i);
  },
  async run(deps, i): Promise<Stopped | StoppedAll> {
    const { all, role, ...one } = i;
    if (all) {
      const { stopAll } = await import("../session/stop-all.ts");
      return stopAll(deps, { ...one, role });
    }
    const { stopSession } = await import("../session/stop.ts");
    return stopSession(deps, one);
  },
  text: (r: Stopped | StoppedAll) => ("stopped" in r ? stoppedAllText(r) : stoppedText(r)),
  result: () => {
    const one = z.looseObject({ name: str(), status: str(), already: z.boolean(), pane: strOrNull(), session_id: strOrNull(), purged: z.array(str()) });
    return z.union([one, z.looseObject({ stopped: z.array(one), left: z.array(z.looseObject({ name: str(), why: str() })), role: strOrNull() })]);
  },
  exitCode: (r: Stopped | StoppedAll) => ("stopped" in r && r.left.length > 0 ? 1 : 0),
  cli: {
    path: "stop",
    group: "agents",
    extra: "stop-modes",
    positionals: ["name"],
    hide: ["mode"],
    flags: {
      pane: { valueHint: "ID" },
      reason: { valueHint: "TEXT" },
      purge: { flag: "purge-conversation" },
      role: { valueHint: "ROLE" },
    },
    examples: [
      "mam stop api-worker-claude",
      'mam stop api-worker-claude --reason "done for today"',
      "mam stop api-worker-claude --hard",
      "mam stop api-worker-claude --soft",
      "mam stop api-worker-claude --hard --purge-conversation --yes",
      "mam stop feat-x --remove-worktree            # refused (exit 4) when it has uncommitted or unmerged work",
      "mam stop feat-x --remove-worktree --force",
      "mam stop --pane %7                            # a row whose name mam would refuse (see: mam registry check)",
      "mam stop --all                                # every running session (mam resume --all brings them back)",
      "mam stop --all --role worker --hard",
    ],
  },
  mcp: { aliases: ["stop_agent"], hide: ["purge", "all", "role"], description: "Stop an agent session: graceful (resumable later), hard (close its pane now) or soft (archive the row, leave the pane)." },
  ui: { fields: ["name"], fixed: { mode: "graceful", reason: "stopped from mam ui" } },
});

export const sessionResume = defineOp({
  name: "session.resume",
  summary: "bring a stopped session back with its own conversation (else this workspace's newest)",
  readOnly: false,
  input: () => ({
    name: optional(sessionName("session name, as `mam status` lists it (or give {{pane}})")),
    pane: optional(paneId()),
    rename: optional(sessionName("the name it comes back under (its row takes it; needed for a row whose name mam would refuse)")),
    fresh: withDefault(flag("start a fresh conversation when none is found"), false),
    start_server: withDefault(flag("start the herdr server (headless, detached) when it is not running"), false),
    all: withDefault(flag("every stopped session (of {{role}}), one at a time, in name order"), false),
    role: optional(text("with {{all}}: only the sessions of this role", { max: 64, oneLine: true })),
    stagger: optional(text("with {{all}}: the pause between two starts, as a duration (default 2s; 0 for none)", { max: 20, oneLine: true })),
    max_running: optional(count("with {{all}}: never more running sessions than this (in the workspace, or the role); the rest stay stopped", 1, 10_000)),
    limited: withDefault(flag("not a stopped session: type the agent's own continue now into every running agent at a usage limit (or {{name}}), at its prompt only, as the daemon does at the reset with create --on-limit resume"), false),
  }),
  check(i) {
    if (i.limited) {
      const other = (["pane", "rename", "role", "stagger", "max_running"] as const).find((k) => i[k] !== undefined) ?? (i.all ? "all" : i.fresh ? "fresh" : undefined);
      if (other !== undefined) throw usageError(`${field("limited")} types the agents' own continue (every limited agent, or ${field("name")}): no ${field(other)}`);
      return;
    }
    if (!i.all) {
      if (i.role !== undefined || i.stagger !== undefined || i.max_running !== undefined) throw usageError(`${field(i.role !== undefined ? "role" : i.stagger !== undefined ? "stagger" : "max_running")} goes with ${field("all")}`);
      return oneRow(i);
    }
    if (i.name !== undefined || i.pane !== undefined || i.rename !== undefined) throw usageError(`${field("all")} resumes every stopped session: no ${field(i.name !== undefined ? "name" : i.pane !== undefined ? "pane" : "rename")}`);
  },
  async run(deps, i, ctx): Promise<Resumed | ResumedAll | ResumedLimited> {
    if (i.limited) return (await import("../session/limit-resume.ts")).resumeLimitedNow(deps, i.name);
    const r = await (async () => {
      if (i.all) {
        const { resumeAll } = await import("../session/resume-all.ts");
        return resumeAll(deps, { role: i.role, stagger: i.stagger ?? "2s", max_running: i.max_running, fresh: i.fresh, start_server: i.start_server }, ctx.signal);
      }
      const [{ resumeSession }, { refuseOverCap }] = await Promise.all([import("../session/resume.ts"), import("../session/cap.ts")]);
      const data = deps.registry.read();
      // one more running session counts against the workspace's cap (a running one is resume's own error)
      const row = allRows(data).find((r) => (i.name !== undefined ? r.name === i.name : r.pane?.id === i.pane));
      if (row?.status !== "running") refuseOverCap(data, deps.env, undefined);
      return resumeSession(deps, i);
    })();
    // an agent started again is watched as a created one is: the daemon (schedules, notifications, budgets)
    if ("resumed" in r ? r.resumed.length > 0 : !r.already) {
      const { ensureDaemonNoticed } = await import("../job/submit.ts");
      r.daemon_pid = await ensureDaemonNoticed(deps, r.warnings, "its dialogs, jobs and notifications are watched only while a daemon runs");
    }
    return r;
  },
  text: (r: Resumed | ResumedAll | ResumedLimited) => ("continued" in r ? continuedText(r) : "resumed" in r ? resumedAllText(r) : resumedText(r)),
  result: () =>
    z.union([
      z.looseObject({ name: str(), already: z.boolean(), pane: str(), session_id: strOrNull(), from: str() }),
      z.looseObject({ resumed: z.array(z.looseObject({ name: str(), pane: str(), from: str() })), left: z.array(z.looseObject({ name: str(), why: str() })), fresh_needed: z.array(str()), role: strOrNull() }),
      z.looseObject({ continued: z.array(z.looseObject({ name: str(), job_id: strOrNull() })), left: z.array(z.looseObject({ name: str(), why: str() })), warnings: warnings() }),
    ]),
  exitCode: (r: Resumed | ResumedAll | ResumedLimited) => ("continued" in r ? (r.left.length > 0 ? 1 : 0) : "resumed" in r && r.left.some((l) => !l.why.includes("the cap")) ? 1 : 0),
  cli: {
    path: "resume",
    group: "agents",
    positionals: ["name"],
    flags: { pane: { valueHint: "ID" }, rename: { valueHint: "NAME" }, role: { valueHint: "ROLE" }, stagger: { valueHint: "DURATION" }, max_running: { valueHint: "N" } },
    examples: [
      "mam resume api-worker-claude",
      "mam resume api-worker-claude --fresh",
      "mam resume --pane %7 --rename worker-2     # a row whose name mam would refuse",
      "mam resume --all --stagger 5s --max-running 8   # the stopped team, without a storm",
      "mam resume --limited              # type continue into every agent at a usage limit, now",
    ],
  },
  mcp: { aliases: ["resume_agent"], hide: ["all", "role", "stagger", "max_running", "limited"], description: "Bring a stopped agent session back with its own conversation (else this workspace's newest of that agent)." },
  ui: { fields: ["name"], fixed: { fresh: false, start_server: false } },
});

/** one thing that needs a person (lib/ops/session/why.ts NeedItem): what, the session or job, since when, the command that acts */
const needOut = () =>
  z.looseObject({
    kind: z.enum(["permission", "start_dialog", "dialog", "gave_up", "job_waits", "over_budget", "merge_dirty", "merge_dropped"]),
    what: str(),
    session: z.optional(str()),
    job: z.optional(str()),
    since: z.optional(str()),
    act: str(),
    deny: z.optional(str()),
  });

export const sessionStatus = defineOp({
  name: "session.status",
  summary: "every agent session of the workspace: registry status, live state, why it is not working, job, drift; and what needs you now (read-only)",
  readOnly: true,
  input: () => ({
    fleet: withDefault(flag("every host of the team: the agents their daemons announce, offline hosts with when they were last seen"), false),
    needs_me: withDefault(flag("only what needs a person now (a dialog to answer, an agent that stays dead, a stuck merge …), most urgent first, each with the command that acts on it"), false),
    jobs: withDefault(flag("the jobs as a board: waiting (after other jobs), queued, working, in review, merging, done, failed; with who has each and since when"), false),
  }),
  async run(deps, i, ctx): Promise<StatusDoc | RosterDoc | NeedItem[] | Board> {
    if (i.fleet && i.needs_me) throw usageError(`${field("fleet")} and ${field("needs_me")} do not go together`, "what needs you is per workspace: mam status --needs-me in each");
    if (i.jobs && (i.fleet || i.needs_me)) throw usageError(`${field("jobs")} goes alone: the board of this workspace's jobs`);
    if (i.jobs) return (await import("../job/board.ts")).readBoard(deps);
    if (i.fleet) return (await import("../team.ts")).rosterStatus(deps);
    const [{ sessionStatus }, { needsMe, waitsMatter }, { readStuck }] = await Promise.all([import("../session/status-run.ts"), import("../session/why.ts"), import("../job/stuck.ts")]);
    const doc = await sessionStatus(deps, ctx.form === "json" && !i.needs_me);
    const needs = needsMe({ sessions: doc.sessions, ...readStuck(deps, waitsMatter(doc.sessions)) });
    return i.needs_me ? needs : { ...doc, needs };
  },
  text: (doc: StatusDoc | RosterDoc | NeedItem[] | Board, o) =>
    "board" in doc ? (require("../../jobs/board.ts") as typeof import("../../jobs/board.ts")).boardText(doc.board) : Array.isArray(doc) ? needsText(doc) : "team" in doc ? (require("./team.ts") as typeof import("./team.ts")).rosterText(doc) : renderStatus(doc, o.color),
  result: () =>
    z.union([
      z.looseObject({
        workspace: str(),
        registry: str(),
        sessions: z.array(
          z.looseObject({
            name: str(),
            agent: strOrNull(),
            role: strOrNull(),
            status: str(),
            live: str(),
            mux: str(),
            server: str(),
            pane: strOrNull(),
            job: z.nullable(z.looseObject({ id: str(), status: str() })),
            drift: z.array(str()),
            usage: z.looseObject({ job: z.nullable(usageOut()), today: usageOut(), total: usageOut() }),
            question: z.optional(questionOut()),
            limit: z.optional(z.looseObject({ since: str(), resets_at: strOrNull(), reason: str(), source: z.enum(["records", "screen"]), used_percent: z.optional(z.number()) })),
            /** created with --restart on-failure, once it died: restarting (N/MAX this hour), gave up restarting */
            restart: z.optional(str()),
            /** over its daily cap today: what went over */
            over_budget: z.optional(str()),
            /** its sandbox ("bwrap, net model"; docs/sandbox.md); absent: none */
            sandbox: z.optional(str()),
            /** why it is not working (or what it works on), in a few words */
            why: z.looseObject({
              kind: z.enum(["idle", "working", "limited", "blocked", "restarting", "gave_up", "over_budget", "dead", "stopped", "ended", "unreachable", "unknown"]),
              text: str(),
            }),
          }),
        ),
        needs: z.array(needOut()),
      }),
      rosterOut(),
      z.array(needOut()),
      z.looseObject({ workspace: str(), board: z.record(z.enum(BOARD_COLUMNS), z.array(z.looseObject({ job_id: str(), column: z.enum(BOARD_COLUMNS), who: str(), since: str(), task: str(), note: str() }))) }),
    ]),
  cli: {
    path: "status",
    alias: "ls",
    group: "agents",
    extra: "status-watch",
    examples: [
      "mam status",
      "mam ls --json",
      "mam status --watch 5",
      "mam status --needs-me      # only what needs you now, each with the command to act",
      "mam status --jobs          # the jobs as a board: waiting, queued, working, in review, merging, done, failed",
      "mam status --fleet          # the team's hosts: NAME@HOST, live state, jobs",
    ],
  },
  // the team's hosts are team_show's (one result shape per tool)
  mcp: {
    aliases: ["status"],
    hide: ["fleet"],
    description:
      "List every agent session of the workspace: registry status, live state (working/blocked/idle/dead), why it is not working (why: at its prompt, limited until T, blocked on a dialog …), pane, current job, drift; and `needs`, what needs a person now, each with the command that acts (needs_me: only that list). The team's other hosts: team_show.",
  },
});

export const sessionPrune = defineOp({
  name: "session.prune",
  summary: "remove the registry rows of stopped and terminated sessions (never a running one; conversations and jobs stay)",
  readOnly: false,
  input: () => ({
    names: withDefault(z.array(sessionName()).check(z.describe("only these sessions (default: every row in the chosen statuses)")), []),
    statuses: withDefault(
      z.array(z.enum(["stopped", "terminated", "archived"])).check(z.minLength(1), z.describe("the statuses whose rows go (default stopped and terminated; archived rows may still have a pane running)")),
      ["stopped", "terminated"],
    ),
    dry_run: withDefault(flag("say what would be removed, change nothing"), false),
  }),
  async run(deps, i) {
    const { pruneSessions } = await import("../session/prune.ts");
    return pruneSessions(deps, i);
  },
  text: (p: Pruned) => prunedText(p),
  result: () => z.looseObject({ removed: z.array(z.looseObject({ name: str(), status: str(), mux: str(), server: str() })), dry_run: z.boolean(), warnings: warnings() }),
  cli: {
    path: "prune",
    group: "agents",
    positionals: ["names"],
    flags: { statuses: { flag: "status", valueHint: "STATUS" } },
    examples: ["mam prune                       # every stopped and terminated row", "mam prune w1 w2 --dry-run", "mam prune --status archived --status terminated"],
  },
  mcp: { description: "Remove the registry rows of stopped and terminated sessions the user no longer wants (never a running one; conversations and jobs stay)." },
  ui: { fields: ["names"], fixed: { dry_run: false } },
});

export const sessionSend = defineOp({
  name: "session.send",
  summary: "type one line into a running session's agent, at its input prompt",
  readOnly: false,
  input: () => ({
    name: sessionName(),
    text: z.string().check(
      z.refine((v: string) => v.trim() !== "", { error: "the line to send is empty" }),
      z.maxLength(4000, { error: "the line to send is longer than 4000 characters" }),
      // one line of printable text: the one rule of what never reaches a pane raw (lib/sys/sanitize.ts),
      // refused here rather than escaped, since the user typing it can fix it
      z.refine((v: string) => !hasUnsafe(v), {
        error: "the line to send has a control character (newline, escape, C1, U+2028/9), a bidi control or an invisible character (zero-width, tag, soft hyphen); send one line of plain text",
      }),
      z.describe("the line to type"),
    ),
  }),
  async run(deps, i) {
    const { sendLine } = await import("../session/send.ts");
    return sendLine(deps, i);
  },
  text: (s: Sent) => `sent to ${s.name}`,
  result: () => z.looseObject({ name: str(), pane: str(), warnings: warnings() }),
  cli: false,
  mcp: false,
  ui: { fields: ["name", "text"] },
});

export const sessionApprove = defineOp({
  name: "session.approve",
  summary: "answer an agent's permission dialog for you: its one-time yes (or the no, or the choice you name), only while it is the dialog you were shown",
  readOnly: false,
  input: () => ({
    target: z.string().check(
      z.refine((v: string) => isValidJobId(v) || isValidAddress(v), {
        error: (iss) => `invalid session or job '${String(iss.input).slice(0, 80)}'`,
        params: { hint: "a session name as `mam status` lists it, or a job id (8 hex digits)" },
      }),
      z.describe("the session (NAME) whose agent waits at a permission dialog, or the job (its id) whose agent does"),
    ),
    deny: withDefault(flag("answer no (the dialog's own no) instead of the one-time yes"), false),
    choice: optional(count("pick the choice of this number instead (the only way to an \"always\" / \"don't ask again\" choice)", 1, 99)),
    fingerprint: optional(
      z.string().check(
        z.regex(/^[0-9a-f]{16}$/, { error: (iss) => `invalid fingerprint '${String(iss.input).slice(0, 40)}' (16 hex digits, as mam status --json, the permission_required event or the notification shows it)` }),
        z.describe("the dialog you answer, as mam showed it to you (default: the one question the job told about since its last answer)"),
      ),
    ),
  }),
  async run(deps, i, ctx) {
    const { approve } = await import("../session/approve.ts");
    return approve(deps, i, ctx);
  },
  text: (a: Answered) => answeredText(a),
  result: () =>
    z.looseObject({
      session: str(),
      job_id: strOrNull(),
      answer: z.enum(["approved", "denied"]),
      choice: z.looseObject({ n: int(), label: str(), key: str(), role: str() }),
      question: questionOut(),
      key: str(),
      answered: z.boolean(),
      seq: z.nullable(int()),
      told: z.boolean(),
      warnings: warnings(),
    }),
  cli: {
    path: "approve",
    group: "agents",
    positionals: ["target"],
    flags: { target: { valueHint: "NAME|JOB" }, choice: { valueHint: "N" }, fingerprint: { valueHint: "HEX" } },
    examples: [
      "mam approve wrk --fingerprint 6c76e0d47014c496     # the one-time yes of the dialog mam status showed",
      "mam approve 3f9a01bc                               # the job's agent: the question the job told you about",
      "mam approve 3f9a01bc --deny                        # no: the agent is told, and goes on or ends the job",
      "mam approve wrk --choice 2 --fingerprint 6c76e0d47014c496   # an \"always\" choice, only when you name it",
    ],
  },
  mcp: {
    aliases: ["approve"],
    hide: ["choice"],
    description:
      "Answer a worker's permission dialog (a permission_required event carries its question and fingerprint): the one-time yes, or the no with deny. Pressed only while that dialog is still on screen; never an \"always\" choice.",
  },
  // the page answers only the dialog it shows (its fingerprint), with the one-time yes or the no:
  // an "always" choice is the command line's (--choice), never a button's
  ui: { fields: ["target", "fingerprint", "deny"], required: ["fingerprint"] },
});

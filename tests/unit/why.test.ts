// The "leave it" view (issue 34 item 5): the pure decision why an agent is not working
// (lib/ops/session/why.ts whyNot), one case each, and the list of what needs a person (needsMe):
// each kind of item, with its command, most urgent first and in a stable order; the merge queue's
// stuck entries (merge-plan.ts stuckMerges); and the two texts mam status prints.
import { describe, expect, test } from "bun:test";
import { type NeedItem, needsMe, type WhyInput, waitsMatter, whyNot } from "../../lib/ops/session/why.ts";
import { stuckMerges, type MergeEntry } from "../../lib/ops/job/merge-plan.ts";
import { needsText, renderStatus, type StatusLine } from "../../lib/ops/session/status.ts";

const NOW_S = 1_800_000_000;
const NOW = NOW_S * 1000;
const line = (more: Partial<WhyInput> = {}): WhyInput => ({ name: "w1", status: "running", live: "idle", job: null, mux: "tmux", server: "mam", pane: "%1", ...more });
const question = { title: "Bash command", subject: "touch x", fingerprint: "6c76e0d47014c496" };
const iso = (s: number) => new Date(s * 1000).toISOString().replace(/\.000Z$/, "Z");

describe("whyNot: one short reason per agent", () => {
  test("at its prompt, no job (an ended job is no job)", () => {
    expect(whyNot(line(), NOW)).toEqual({ kind: "idle", text: "at its prompt, no job" });
    expect(whyNot(line({ job: { id: "0123abcd", status: "completed" } }), NOW)).toEqual({ kind: "idle", text: "at its prompt, no job" });
  });
  test("at its prompt while its job is open says which", () => {
    expect(whyNot(line({ job: { id: "0123abcd", status: "running" } }), NOW)).toEqual({ kind: "idle", text: "at its prompt (job 0123abcd is running)" });
  });
  test("working on its job; working with none", () => {
    expect(whyNot(line({ live: "working", job: { id: "0123abcd", status: "running" } }), NOW)).toEqual({ kind: "working", text: "working on job 0123abcd" });
    expect(whyNot(line({ live: "working" }), NOW)).toEqual({ kind: "working", text: "working" });
  });
  test("limited until T, or reset unknown; the limit wins over the prompt it sits at", () => {
    const at = new Date(NOW + 2 * 3600_000);
    const hm = `${String(at.getHours()).padStart(2, "0")}:${String(at.getMinutes()).padStart(2, "0")}`;
    expect(whyNot(line({ limit: { since: iso(NOW_S), resets_at: at.toISOString() } }), NOW)).toEqual({ kind: "limited", text: `limited until ${hm}` });
    expect(whyNot(line({ limit: { since: iso(NOW_S), resets_at: null } }), NOW)).toEqual({ kind: "limited", text: "limited (reset unknown)" });
    // its own limit menu is a dialog of the limit: limited, not blocked
    expect(whyNot(line({ live: "blocked", dialog: "limit", reason: "What do you want to do?", limit: { since: iso(NOW_S), resets_at: null } }), NOW).kind).toBe("limited");
  });
  test("blocked on a permission prompt names its command; a start dialog its words; another dialog its reason", () => {
    expect(whyNot(line({ live: "blocked", dialog: "permission", question }), NOW)).toEqual({ kind: "blocked", text: "blocked on a permission prompt: touch x" });
    expect(whyNot(line({ live: "blocked", dialog: "permission", reason: "Allow edit?" }), NOW)).toEqual({ kind: "blocked", text: "blocked on a permission prompt (Allow edit?)" });
    expect(whyNot(line({ live: "blocked", dialog: "start", reason: "Do you trust the files in this folder?" }), NOW)).toEqual({ kind: "blocked", text: "blocked at its start dialog (Do you trust the files in this folder?)" });
    expect(whyNot(line({ live: "blocked" }), NOW)).toEqual({ kind: "blocked", text: "blocked on a dialog" });
    // a permission prompt of a limited agent still holds it: blocked first
    expect(whyNot(line({ live: "blocked", dialog: "permission", question, limit: { since: iso(NOW_S), resets_at: null } }), NOW).kind).toBe("blocked");
  });
  test("dead and restarting (n/N); gave up restarting; dead with no restart; ended", () => {
    expect(whyNot(line({ status: "terminated", live: "dead", restart: "restarting (2/3 this hour)" }), NOW)).toEqual({ kind: "restarting", text: "dead, restarting (2/3 this hour)" });
    expect(whyNot(line({ status: "terminated", live: "dead", restart: "gave up restarting" }), NOW)).toEqual({ kind: "gave_up", text: "gave up restarting" });
    expect(whyNot(line({ live: "dead" }), NOW)).toEqual({ kind: "dead", text: "dead: its agent has exited" });
    expect(whyNot(line({ status: "terminated", live: "dead" }), NOW)).toEqual({ kind: "ended", text: "terminated" });
    expect(whyNot(line({ status: "archived", live: "dead" }), NOW)).toEqual({ kind: "ended", text: "archived" });
  });
  test("over its daily budget, unless it is at work", () => {
    const over = "went over its daily cap: $2.10 of $2.00 (UTC day 2027-01-15)";
    expect(whyNot(line({ over_budget: over }), NOW)).toEqual({ kind: "over_budget", text: "over its daily budget (no job until 00:00 UTC)" });
    expect(whyNot(line({ over_budget: over, live: "working" }), NOW).kind).toBe("working");
  });
  test("stopped (whatever its pane shows); unreachable; unknown", () => {
    expect(whyNot(line({ status: "stopped", live: "dead", restart: "gave up restarting" }), NOW)).toEqual({ kind: "stopped", text: "stopped" });
    expect(whyNot(line({ live: "unreachable" }), NOW)).toEqual({ kind: "unreachable", text: "its server does not answer" });
    expect(whyNot(line({ live: "unknown" }), NOW)).toEqual({ kind: "unknown", text: "state unknown" });
  });
});

const entry = (more: Partial<MergeEntry>): MergeEntry => ({ job_id: "aaaa0001", session: "w1", branch: "mam/w1", worktree: "/wt/w1", target: "main", state: "queued", order: 1, since: NOW_S - 60, fixes: 0, tries: 0, ...more });

describe("stuckMerges: the merge queue's entries a person has to look at", () => {
  test("one blocked on a dirty checkout; one dropped after its fix jobs or tries, for a day", () => {
    const dirty = entry({ blocked: "main is checked out in /ws, which has uncommitted changes (1 file)" });
    const gaveUp = entry({ job_id: "aaaa0002", state: "dropped", fixes: 3, note: "conflict in a.txt; gave up after 3 fix jobs: merge it by hand" });
    const tries = entry({ job_id: "aaaa0003", state: "dropped", tries: 5 });
    const old = entry({ job_id: "aaaa0004", state: "dropped", fixes: 3, since: NOW_S - 2 * 86_400 });
    const ownJobFailed = entry({ job_id: "aaaa0005", state: "dropped", note: "job aaaa0005 ended error: its branch is not merged" });
    const fine = [entry({ job_id: "aaaa0006" }), entry({ job_id: "aaaa0007", state: "merged" }), entry({ job_id: "aaaa0008", state: "fixing", fixes: 1 })];
    expect(stuckMerges([dirty, gaveUp, tries, old, ownJobFailed, ...fine], NOW_S).map((s) => [s.entry.job_id, s.stuck])).toEqual([
      ["aaaa0001", "dirty"],
      ["aaaa0002", "dropped"],
      ["aaaa0003", "dropped"],
    ]);
  });
});

describe("needsMe: what needs a person, most urgent first", () => {
  const blocked = line({ name: "wp", live: "blocked", dialog: "permission", question });
  const start = line({ name: "ws", live: "blocked", dialog: "start", reason: "Do you trust the files in this folder?", mux: "herdr", server: "main", pane: "w1:p2" });
  const other = line({ name: "wo", live: "blocked", reason: "Pick a model" });
  const gaveUp = line({ name: "wg", status: "terminated", live: "dead", restart: "gave up restarting" });
  const budget = line({ name: "wb", over_budget: "went over its daily cap: $2.10 of $2.00 (UTC day 2027-01-15)" });
  const limitedUnknown = (name: string, role = "worker") => ({ ...line({ name, limit: { since: iso(NOW_S), resets_at: null } }), role });
  const limitedKnown = (name: string, role = "worker") => ({ ...line({ name, limit: { since: iso(NOW_S), resets_at: iso(NOW_S + 3600) } }), role });

  test("each kind of item, with the command that acts on it", () => {
    const items = needsMe({
      sessions: [line({ name: "idle" }), line({ name: "busy", live: "working" }), limitedKnown("lk"), blocked, start, other, gaveUp, budget, limitedUnknown("lu1", "fixer")],
      waits: [{ job_id: "bbbb0001", to: null, role: "fixer", since: NOW_S - 30 }],
      merges: [
        { job_id: "cccc0001", branch: "mam/a", target: "main", stuck: "dirty", note: "main is checked out in /ws, which has uncommitted changes (1 file)", since: NOW_S - 10 },
        { job_id: "cccc0002", branch: "mam/b", target: "main", stuck: "dropped", note: "conflict in a.txt; gave up after 3 fix jobs: merge it by hand", since: NOW_S - 20 },
      ],
    });
    expect(items).toEqual<NeedItem[]>([
      { kind: "permission", what: "wp asks: Bash command: touch x", session: "wp", act: "mam approve wp --fingerprint 6c76e0d47014c496", deny: "mam approve wp --fingerprint 6c76e0d47014c496 --deny" },
      { kind: "start_dialog", what: "ws waits at its start dialog (Do you trust the files in this folder?)", session: "ws", act: "answer it in its pane: herdr --session main, pane w1:p2" },
      { kind: "dialog", what: "wo is blocked on a dialog (Pick a model)", session: "wo", act: "answer it in its pane: tmux -L mam attach -t wo" },
      { kind: "gave_up", what: "wg kept dying: mam gave up restarting it", session: "wg", act: "see why in its pane's last output, then: mam resume wg" },
      { kind: "job_waits", what: "job bbbb0001 waits for a free fixer: every fixer is limited with no reset known", job: "bbbb0001", since: iso(NOW_S - 30), act: "try them now: mam resume --limited (else add one: mam create --role fixer …)" },
      { kind: "over_budget", what: "wb went over its daily cap: $2.10 of $2.00 (UTC day 2027-01-15)", session: "wb", act: "it takes no job until 00:00 UTC; to go on now, send its jobs to another agent" },
      { kind: "merge_dirty", what: "the merge of job cccc0001 (mam/a → main) waits: main is checked out in /ws, which has uncommitted changes (1 file)", job: "cccc0001", since: iso(NOW_S - 10), act: "commit or stash the changes there; the queue tries again (mam merge status)" },
      { kind: "merge_dropped", what: "the merge of job cccc0002 (mam/b → main) was dropped: conflict in a.txt; gave up after 3 fix jobs: merge it by hand", job: "cccc0002", since: iso(NOW_S - 20), act: "merge mam/b by hand, or queue it again: mam merge enqueue cccc0002" },
    ]);
  });

  test("nothing: idle, working, limited with a known reset, stopped, restarting; a job waiting for them", () => {
    const sessions = [line({ name: "a" }), line({ name: "b", live: "working" }), limitedKnown("c"), line({ name: "d", status: "stopped", live: "dead" }), line({ name: "e", status: "terminated", live: "dead", restart: "restarting (1/3 this hour)" })];
    expect(needsMe({ sessions, waits: [{ job_id: "bbbb0001", to: "c", role: null, since: NOW_S }, { job_id: "bbbb0002", to: null, role: "worker", since: NOW_S }], merges: [] })).toEqual([]);
    expect(waitsMatter(sessions)).toBe(false);
  });

  test("a job for one agent limited with no reset known; a pool job only when every agent of the role is", () => {
    const waits = [
      { job_id: "bbbb0001", to: "lu1", role: null, since: NOW_S - 5 },
      { job_id: "bbbb0002", to: null, role: "worker", since: NOW_S - 9 },
    ];
    const some = needsMe({ sessions: [limitedUnknown("lu1"), limitedKnown("lk")], waits });
    expect(some.map((n) => [n.kind, n.job, n.session])).toEqual([["job_waits", "bbbb0001", "lu1"]]);
    expect(some[0]!.act).toBe("try it now: mam resume --limited lu1 (else mam job cancel bbbb0001 and send it to another agent)");
    const all = needsMe({ sessions: [limitedUnknown("lu1"), limitedUnknown("lu2")], waits });
    // the one waiting longer first
    expect(all.map((n) => n.job)).toEqual(["bbbb0002", "bbbb0001"]);
    expect(waitsMatter([limitedUnknown("lu1")])).toBe(true);
  });

  test("a stable order: by urgency, then the oldest, then by name, whatever order they came in", () => {
    const a = line({ name: "a", live: "blocked", dialog: "permission", question });
    const b = line({ name: "b", live: "blocked", dialog: "permission", question });
    const g = line({ name: "g", status: "terminated", live: "dead", restart: "gave up restarting" });
    const m = { job_id: "cccc0001", branch: "x", target: "main", stuck: "dirty" as const, note: "dirty", since: NOW_S };
    const one = needsMe({ sessions: [g, b, a], merges: [m] }).map((n) => n.session ?? n.job);
    const two = needsMe({ sessions: [a, g, b], merges: [m] }).map((n) => n.session ?? n.job);
    expect(one).toEqual(["a", "b", "g", "cccc0001"]);
    expect(two).toEqual(one);
  });
});

describe("the texts", () => {
  test("--needs-me: one line each with its command; nothing needs you", () => {
    expect(needsText([])).toBe("nothing needs you");
    const [p] = needsMe({ sessions: [line({ name: "wp", live: "blocked", dialog: "permission", question })] });
    expect(needsText([p!])).toBe("wp asks: Bash command: touch x  →  mam approve wp --fingerprint 6c76e0d47014c496   (add --deny for the no)");
  });
  test("mam status: the block on top only when something needs you; each agent's why under the table", () => {
    const s = (more: Partial<StatusLine>): StatusLine => {
      const l = { agent: "claude", role: "worker", drift: [], ...line(more), ...more } as Omit<StatusLine, "why">;
      return { ...l, why: whyNot(l, NOW) } as StatusLine;
    };
    const calm = renderStatus({ workspace: "/w", registry: "/w/r.yaml", sessions: [s({ name: "w1" }), s({ name: "w2", live: "working", job: { id: "0123abcd", status: "running" } })], needs: [] }, false);
    expect(calm).not.toContain("needs you");
    expect(calm.split("\n")[0]).toMatch(/^NAME\s+AGENT/);
    expect(calm).toContain("\nw1: at its prompt, no job\nw2: working on job 0123abcd");
    const sessions = [s({ name: "w1" }), s({ name: "wp", live: "blocked", dialog: "permission", question: { ...question, kind: "claude", what: "command", body: [], notes: [], question: "Do you want to proceed?", choices: [] } as unknown as StatusLine["question"] })];
    const busy = renderStatus({ workspace: "/w", registry: "/w/r.yaml", sessions, needs: needsMe({ sessions }) }, false);
    expect(busy.startsWith("needs you now:\n  wp asks: Bash command: touch x  →  mam approve wp --fingerprint 6c76e0d47014c496")).toBe(true);
    expect(busy).toContain("\nwp: blocked on a permission prompt: touch x");
    // a restarted agent that runs again says so on its line
    expect(renderStatus({ workspace: "/w", registry: "/r", sessions: [s({ name: "w1", restart: "restarting (1/3 this hour)" })], needs: [] }, false)).toContain("w1: at its prompt, no job · restarted (1/3 this hour)");
  });
});

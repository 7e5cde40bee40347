// mam doctor's decisions (lib/doctor/diagnose.ts): each piece ok, info, warn or fail, with its fix;
// only what stops mam fails. The facts are built by hand; tests/integration/doctor.test.ts runs
// the binary on a real PATH.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { VERIFIED } from "../../lib/agents/kinds/index.ts";
import { type AgentFact, type Check, compareVersions, diagnose, doctorExit, doctorText, type Facts, versionIn } from "../../lib/doctor/diagnose.ts";

const agent = (kind: string, o: Partial<AgentFact> = {}): AgentFact => ({ kind, exe: kind, path: `/bin/${kind}`, version: VERIFIED[kind]?.version ?? null, verified: VERIFIED[kind]?.version ?? null, newest: VERIFIED[kind]?.newest ?? null, pkg: VERIFIED[kind]?.package ?? null, ...o });

function facts(o: Partial<Facts> = {}): Facts {
  return {
    mam: { version: "0.4.0", commit: "abc", target: "bun-linux-x64", self: "/usr/local/bin/mam", compiled: true, onPath: "/usr/local/bin/mam", onPathIsSelf: true },
    agents: [agent("claude"), agent("codex", { path: null, version: null }), agent("hermes", { path: null, version: null })],
    tmux: { path: "/usr/bin/tmux", version: "3.3a" },
    herdr: { path: null, support: null, error: null },
    broker: { configured: null, address: null, reachable: null, error: null },
    sandbox: { bwrap: "/usr/bin/bwrap", error: null },
    workspace: { registry: "/w/.mam/agent-sessions.yaml", hasRegistry: true, registryError: null, kinds: ["claude"], daemon: { pid: 7, mode: "polling", since: "2026-12-02T10:00:00Z" }, daemonDisabled: false, running: 1, sandboxed: 0, hooks: [{ kind: "claude", state: "installed", where: "/w/.claude/settings.local.json" }] },
    ...o,
  };
}
const byId = (cs: Check[], id: string) => cs.find((c) => c.id === id);

describe("diagnose", () => {
  test("the sandbox: bwrap there and working is ok; missing or refused is info or a warning, a failure when the workspace has sandboxed agents", () => {
    expect(byId(diagnose(facts()), "sandbox")).toMatchObject({ status: "ok", detail: "/usr/bin/bwrap makes sandboxes here" });
    expect(byId(diagnose(facts({ sandbox: { bwrap: null, error: null } })), "sandbox")).toMatchObject({ status: "info", detail: "bwrap not installed (only --sandbox bwrap needs it)", fix: "apt install bubblewrap (or set MAM_BWRAP to its path)" });
    const refused = facts({ sandbox: { bwrap: "/usr/bin/bwrap", error: "No permissions to create new namespace" } });
    expect(byId(diagnose(refused), "sandbox")).toMatchObject({ status: "warn", detail: "/usr/bin/bwrap cannot make a sandbox here: No permissions to create new namespace" });
    const used = { ...facts().workspace!, sandboxed: 2 };
    const gone = diagnose(facts({ sandbox: { bwrap: null, error: null }, workspace: used }));
    expect(byId(gone, "sandbox")).toMatchObject({ status: "fail", detail: "bwrap not installed, and this workspace has 2 sandboxed agents (they cannot be resumed)" });
    expect(doctorExit(gone)).toBe(1);
    expect(byId(diagnose({ ...refused, workspace: used }), "sandbox")!.status).toBe("fail");
  });

  test("a ready machine: nothing fails, exit 0; an unverified kind nobody uses and has not installed is not listed", () => {
    const cs = diagnose(facts());
    expect(cs.filter((c) => c.status === "fail" || c.status === "warn")).toEqual([]);
    expect(doctorExit(cs)).toBe(0);
    expect(byId(cs, "agent.claude")).toMatchObject({ status: "ok", detail: "2.1.197 at /bin/claude (the oldest verified version)" });
    expect(byId(cs, "agent.codex")).toMatchObject({ status: "info", detail: "not installed", fix: "to use it: npm i -g @openai/codex" });
    expect(byId(cs, "agent.hermes")).toBeUndefined();
    expect(doctorText(cs)).toEndWith("\n\nall good");
  });

  test("a version outside the verified range: a warning with the newest verified pin, never a failure; inside it: ok", () => {
    const cs = diagnose(facts({ agents: [agent("claude", { version: "2.1.400" })] }));
    expect(byId(cs, "agent.claude")).toMatchObject({ status: "warn", fix: "npm i -g @anthropic-ai/claude-code@2.1.332 for the newest verified one, or report what differs" });
    expect(byId(cs, "agent.claude")!.detail).toContain("mam was verified on 2.1.197 to 2.1.332 (this one is newer)");
    expect(doctorExit(cs)).toBe(0);
    expect(byId(diagnose(facts({ agents: [agent("claude", { version: "2.0.1" })] })), "agent.claude")!.detail).toContain("(this one is older)");
    expect(byId(diagnose(facts({ agents: [agent("claude", { version: null })] })), "agent.claude")).toMatchObject({ status: "warn", fix: "check that `claude --version` runs; npm i -g @anthropic-ai/claude-code@2.1.332 is the newest verified one" });
    expect(byId(diagnose(facts({ agents: [agent("claude", { version: "2.1.332" })] })), "agent.claude")).toMatchObject({ status: "ok", detail: "2.1.332 at /bin/claude (the newest verified version)" });
    expect(byId(diagnose(facts({ agents: [agent("claude", { version: "2.1.250" })] })), "agent.claude")).toMatchObject({ status: "ok", detail: "2.1.250 at /bin/claude (within the verified range 2.1.197 to 2.1.332)" });
    // a kind verified on one version: that one only
    expect(byId(diagnose(facts({ agents: [agent("codex", { version: "0.172.0" })] })), "agent.codex")).toMatchObject({ status: "warn", fix: "npm i -g @openai/codex@0.171.0 for the verified one, or report what differs" });
    expect(byId(diagnose(facts({ agents: [agent("codex")] })), "agent.codex")).toMatchObject({ status: "ok", detail: "0.171.0 at /bin/codex (the verified version)" });
  });

  test("what stops mam fails: no agent CLI, no multiplexer, the registry's agent gone, a broker down, an unreadable registry, herdr too old", () => {
    const none = diagnose(facts({ agents: [agent("claude", { path: null }), agent("codex", { path: null })], workspace: null }));
    expect(byId(none, "agents")).toMatchObject({ status: "fail", detail: "no agent CLI is installed" });
    expect(byId(none, "agents")!.fix).toContain("npm i -g @anthropic-ai/claude-code (or @openai/codex)");
    expect(doctorExit(none)).toBe(1);

    const nomux = diagnose(facts({ tmux: { path: null, version: null } }));
    expect(byId(nomux, "mux")).toMatchObject({ status: "fail" });
    expect(byId(diagnose(facts()), "mux")).toBeUndefined();

    const gone = diagnose(facts({ agents: [agent("claude"), agent("codex", { path: null })], workspace: { ...facts().workspace!, kinds: ["claude", "codex"] } }));
    expect(byId(gone, "agent.codex")).toMatchObject({ status: "fail", fix: "npm i -g @openai/codex" });

    const down = diagnose(facts({ broker: { configured: "127.0.0.1:9", address: "127.0.0.1:9", reachable: false, error: "ECONNREFUSED" } }));
    expect(byId(down, "broker")).toMatchObject({ status: "fail", detail: "127.0.0.1:9 unreachable (ECONNREFUSED)" });
    expect(byId(diagnose(facts({ broker: { configured: "b:1883", address: "b:1883", reachable: true, error: null } })), "broker")).toMatchObject({ status: "ok" });
    // a cluster's nodes: one that answers is enough to work; the others are named
    const some = diagnose(facts({ broker: { configured: "a:1,b:1", address: "a:1,b:1", reachable: true, error: "b:1: ECONNREFUSED" } }));
    expect(byId(some, "broker")).toMatchObject({ status: "warn", detail: "a:1,b:1: reachable, but not every node answers (b:1: ECONNREFUSED)" });

    const bad = diagnose(facts({ workspace: { ...facts().workspace!, registryError: "malformed YAML at line 3" } }));
    expect(byId(bad, "registry")).toMatchObject({ status: "fail", detail: "malformed YAML at line 3" });
    expect(byId(bad, "registry")!.fix).toContain("mam registry check");

    const old = diagnose(facts({ herdr: { path: "/bin/herdr", support: { kind: "old", version: "0.7.3" }, error: null } }));
    expect(byId(old, "herdr")).toMatchObject({ status: "fail" });
    const newer = diagnose(facts({ herdr: { path: "/bin/herdr", support: { kind: "newer", version: "0.9.1", protocol: 22 }, error: null } }));
    expect(byId(newer, "herdr")).toMatchObject({ status: "warn" });
    expect(byId(newer, "herdr")!.detail).toStartWith("0.9.1, protocol 22 at /bin/herdr");
  });

  test("the daemon: a warning when agents run without it or it is disabled; info when nothing needs it", () => {
    const w = facts().workspace!;
    expect(byId(diagnose(facts({ workspace: { ...w, daemon: null } })), "daemon")).toMatchObject({ status: "warn", fix: "mam daemon ensure" });
    expect(byId(diagnose(facts({ workspace: { ...w, daemon: null, running: 0 } })), "daemon")).toMatchObject({ status: "info" });
    expect(byId(diagnose(facts({ workspace: { ...w, daemon: null, daemonDisabled: true } })), "daemon")!.fix).toContain("unset MAM_NO_SUBSCRIBER_DAEMON");
  });

  test("mam itself: not on PATH, or another mam first on PATH, is a warning", () => {
    const m = facts().mam;
    expect(byId(diagnose(facts({ mam: { ...m, onPath: null, onPathIsSelf: false } })), "mam")).toMatchObject({ status: "warn" });
    const other = byId(diagnose(facts({ mam: { ...m, onPath: "/opt/old/mam", onPathIsSelf: false } })), "mam")!;
    expect(other.status).toBe("warn");
    expect(other.detail).toContain("/opt/old/mam");
  });

  test("the text: one line per check, the fix under what is not ok, a count at the end; control characters shown", () => {
    const text = doctorText(diagnose(facts({ tmux: { path: "/x/\x1b[2Jtmux", version: "3.3a" }, broker: { configured: "h:1", address: "h:1", reachable: false, error: "ETIMEDOUT" } })));
    expect(text).toContain("ok    tmux ");
    expect(text).toContain("\\x1b[2J");
    expect(text).not.toContain("\x1b");
    expect(text).toMatch(/^fail  broker +h:1 unreachable \(ETIMEDOUT\)\n +fix: start the broker/m);
    expect(text).toEndWith("\n\n1 problem");
  });
});

describe("versions", () => {
  test("versionIn reads what each CLI's --version prints", () => {
    expect(versionIn("2.1.197 (Claude Code)")).toBe("2.1.197");
    expect(versionIn("WARNING: proceeding…\ncodex-cli 0.171.0")).toBe("0.171.0");
    expect(versionIn("tmux 3.3a")).toBe("3.3a");
    expect(versionIn("herdr 0.8.2-rc.1")).toBe("0.8.2-rc.1");
    expect(versionIn("no version here")).toBeNull();
  });
  test("compareVersions", () => {
    expect(compareVersions("2.1.332", "2.1.197")).toBeGreaterThan(0);
    expect(compareVersions("0.171.0", "0.171.0")).toBe(0);
    expect(compareVersions("1.9", "1.10.0")).toBeLessThan(0);
  });
  test("the verified versions and packages are the real-agent suite's pins: the oldest in its package.json, the newest in newest/", () => {
    const pins = JSON.parse(readFileSync(join(import.meta.dir, "..", "real-agents", "package.json"), "utf8")).dependencies as Record<string, string>;
    const newest = JSON.parse(readFileSync(join(import.meta.dir, "..", "real-agents", "newest", "package.json"), "utf8")).dependencies as Record<string, string>;
    for (const [kind, v] of Object.entries(VERIFIED)) {
      if (v.version === "mam") continue;
      expect(v.package, kind).toBeString();
      expect(pins[v.package!], kind).toBe(v.version);
      expect(newest[v.package!] as string | undefined, kind).toBe(v.newest);
      if (v.newest !== undefined) expect(compareVersions(v.newest, v.version), kind).toBeGreaterThan(0);
    }
    // newest/ names no package the pins do not
    for (const p of Object.keys(newest)) expect(Object.values(VERIFIED).some((v) => v.package === p), p).toBe(true);
  });
});

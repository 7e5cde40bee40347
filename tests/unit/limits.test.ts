// Usage and rate limits as the agents' own records and screens show them (lib/agents/limits.ts, the
// kinds' `limits` aspects, the rules files' `limits`): the lines are copied from
// shared/reference/real-limits.md (claude 2.1.197 / 2.1.332, codex 0.171.0 against a scripted endpoint).
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { KINDS } from "../../lib/agents/kinds/index.ts";
import { foldLimit, type LimitFact, parseResetTime, windowName } from "../../lib/agents/limits.ts";
import { detectScreen, screenLimit } from "../../lib/agents/screen/detect.ts";
import { decideLimit } from "../../lib/ops/react/limits-watch.ts";
import { limitProblem, validateRegistry } from "../../lib/registry/validate.ts";

const claude = KINDS.claude!.limits!;
const codex = KINDS.codex!.limits!;
const SCREENS = join(import.meta.dir, "..", "fixtures", "screens");
const screen = (kind: string, name: string) => ({ text: readFileSync(join(SCREENS, kind, `${name}.txt`), "utf8") });
const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
const facts = (parse: (l: string) => LimitFact | undefined, lines: string[]) => lines.map(parse).filter((f): f is LimitFact => f !== undefined);

/** the synthetic answer of a refused turn, 2.1.197 (real-limits.md, "Transcript"), with its time stamp */
const CLAUDE_197 =
  '{"type":"assistant","message":{"model":"<synthetic>","role":"assistant","stop_reason":"stop_sequence","usage":{"input_tokens":0,"output_tokens":0},"content":[{"type":"text","text":"You\'ve hit your session limit · resets 2:53am (UTC)"}]},"error":"rate_limit","isApiErrorMessage":true,"apiErrorStatus":429,"timestamp":"2026-12-02T01:10:00.000Z"}';
/** 2.1.332 with a subscription: apiError and the exact reset (rate_limit_info.resetsAt, epoch s) */
const CLAUDE_332 =
  '{"type":"assistant","message":{"model":"<synthetic>","role":"assistant","stop_reason":"stop_sequence","usage":{"input_tokens":0,"output_tokens":0},"content":[{"type":"text","text":"You\'ve hit your 5-hour limit · resets 2:59am (UTC)"}]},"error":"rate_limit","isApiErrorMessage":true,"apiErrorStatus":429,"apiErrorType":"rate_limit_error","apiError":"usage_limit_reached","apiErrorParams":{"rate_limit_info":{"status":"rejected","resetsAt":1796180364,"rateLimitType":"five_hour","overageStatus":"rejected"}},"timestamp":"2026-12-02T01:10:00.000Z"}';
const CLAUDE_WEEKLY =
  '{"type":"assistant","message":{"model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"You\'ve hit your weekly limit · resets Dec 5, 12:14pm (UTC)"}]},"error":"rate_limit","isApiErrorMessage":true,"apiErrorStatus":429,"timestamp":"2026-12-02T01:10:00.000Z"}';
const CLAUDE_APIKEY =
  '{"type":"assistant","message":{"model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"API Error: Request rejected (429) · This request would exceed your account\'s rate limit. Please try again later."}]},"error":"rate_limit","isApiErrorMessage":true,"apiErrorStatus":429,"apiErrorIsTransient":false,"timestamp":"2026-12-02T01:10:00.000Z"}';
const CLAUDE_529 =
  '{"type":"assistant","message":{"model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"API Error: Repeated 529 Overloaded errors. The API is at capacity — this is usually temporary. Try again in a moment."}]},"error":"server_error","isApiErrorMessage":true,"timestamp":"2026-12-02T01:10:00.000Z"}';
const CLAUDE_ANSWER =
  '{"type":"assistant","message":{"id":"msg_1","model":"claude-opus-4-8","role":"assistant","content":[{"type":"text","text":"done"}],"usage":{"input_tokens":10,"output_tokens":3}},"timestamp":"2026-12-02T03:00:00.000Z"}';

/** codex 0.171.0 rollout lines (real-limits.md, "Codex 0.171.0") */
const CODEX_TOKENS =
  '{"timestamp":"2026-12-02T01:00:00.000Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"limit_id":"codex","limit_name":null,"primary":{"used_percent":42.0,"window_minutes":300,"resets_at":1796185078},"secondary":{"used_percent":17.0,"window_minutes":10080,"resets_at":1796519878},"credits":null,"individual_limit":null,"spend_control_reached":null,"plan_type":null,"rate_limit_reached_type":null}}}';
const CODEX_FULL =
  '{"timestamp":"2026-12-02T01:10:00.000Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"limit_id":"codex","limit_name":null,"primary":{"used_percent":100.0,"window_minutes":300,"resets_at":1796181480},"secondary":{"used_percent":17.0,"window_minutes":10080,"resets_at":1796519878},"credits":null,"plan_type":null}}}';
const CODEX_LIMITED =
  '{"timestamp":"2026-12-02T01:10:00.100Z","type":"event_msg","payload":{"type":"task_complete","last_agent_message":null,"error":{"message":"You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 3:18 AM.","codex_error_info":"usage_limit_exceeded"}}}';
const CODEX_RETRIES =
  '{"timestamp":"2026-12-02T01:10:00.100Z","type":"event_msg","payload":{"type":"task_complete","last_agent_message":null,"error":{"message":"exceeded retry limit, last status: 429 Too Many Requests, request id: req_1","codex_error_info":{"response_too_many_failed_attempts":{"http_status_code":429}}}}}';
const CODEX_DONE = '{"timestamp":"2026-12-02T03:30:00.000Z","type":"event_msg","payload":{"type":"task_complete","last_agent_message":"done"}}';

const NOW = Date.parse("2026-12-02T01:11:00Z");

describe("claude's transcript", () => {
  test("2.1.197: the synthetic rate_limit line is a limit; its reset from its words, in the zone they name", () => {
    expect(claude.parse(CLAUDE_197)).toEqual({ kind: "hit", at: Date.parse("2026-12-02T01:10:00Z"), resets_at: null, resets_text: "2:53am (UTC)", reason: "You've hit your session limit · resets 2:53am (UTC)" });
    const v = foldLimit(facts(claude.parse, [CLAUDE_197]), NOW);
    expect(v).toMatchObject({ limited: true, reason: "You've hit your session limit · resets 2:53am (UTC)" });
    expect(iso(v!.limited ? v!.resets_at : null)).toBe("2026-12-02T02:53:00.000Z");
  });
  test("2.1.332: the exact reset of apiErrorParams.rate_limit_info.resetsAt", () => {
    const v = foldLimit(facts(claude.parse, [CLAUDE_332]), NOW);
    expect(v).toMatchObject({ limited: true, resets_at: 1796180364_000 });
  });
  test("a weekly limit: a date and a time", () => {
    const v = foldLimit(facts(claude.parse, [CLAUDE_WEEKLY]), NOW);
    expect(iso(v!.limited ? v!.resets_at : null)).toBe("2026-12-05T12:14:00.000Z");
  });
  test("an API key's 429 is a limit whose reset is unknown (never guessed)", () => {
    expect(foldLimit(facts(claude.parse, [CLAUDE_APIKEY]), NOW)).toMatchObject({ limited: true, resets_at: null, reason: expect.stringMatching(/^API Error: Request rejected \(429\)/) });
  });
  test("a 529 is no limit; a model's answer after a limit ends it", () => {
    expect(claude.parse(CLAUDE_529)).toBeUndefined();
    expect(foldLimit(facts(claude.parse, [CLAUDE_197, CLAUDE_ANSWER]), NOW)).toEqual({ limited: false });
    expect(foldLimit(facts(claude.parse, [CLAUDE_ANSWER, CLAUDE_APIKEY]), NOW)).toMatchObject({ limited: true });
    expect(foldLimit(facts(claude.parse, ['{"type":"user","message":{"content":"hi"}}']), NOW)).toBeUndefined();
  });
  test("a limit whose reset time has passed is over", () => {
    expect(foldLimit(facts(claude.parse, [CLAUDE_197]), Date.parse("2026-12-02T02:53:00Z"))).toEqual({ limited: false });
  });
});

describe("codex's rollout", () => {
  test("token_count: the fuller window, used percent and reset", () => {
    expect(codex.parse(CODEX_TOKENS)).toEqual({ kind: "window", at: Date.parse("2026-12-02T01:00:00Z"), used_percent: 42, window_minutes: 300, resets_at: 1796185078_000 });
    expect(foldLimit(facts(codex.parse, [CODEX_TOKENS]), NOW)).toEqual({ limited: false, used_percent: 42, window_minutes: 300 });
  });
  test("usage_limit_exceeded: limited until the reset of the window at 100 %", () => {
    const v = foldLimit(facts(codex.parse, [CODEX_TOKENS, CODEX_FULL, CODEX_LIMITED]), NOW);
    expect(v).toMatchObject({ limited: true, resets_at: 1796181480_000, used_percent: 100, reason: expect.stringMatching(/^You’ve hit your usage limit\./) });
  });
  test("without a window, the reset from its words; retries exhausted on 429: unknown", () => {
    expect(codex.parse(CODEX_LIMITED)).toMatchObject({ kind: "hit", resets_text: "3:18 AM" });
    expect(foldLimit(facts(codex.parse, [CODEX_RETRIES]), NOW)).toMatchObject({ limited: true, resets_at: null });
  });
  test("a task_complete without an error after it ends the limit", () => {
    expect(foldLimit(facts(codex.parse, [CODEX_FULL, CODEX_LIMITED, CODEX_TOKENS, CODEX_DONE]), NOW)).toEqual({ limited: false, used_percent: 42, window_minutes: 300 });
  });
});

describe("reset times as the CLIs print them", () => {
  const at = Date.parse("2026-12-02T01:10:00Z");
  test.each([
    ["2:53am (UTC)", "2026-12-02T02:53:00.000Z"],
    ["3pm (UTC)", "2026-12-02T15:00:00.000Z"],
    // earlier in the day than now: tomorrow's
    ["1am (UTC)", "2026-12-03T01:00:00.000Z"],
    ["12:14am (Europe/Paris)", "2026-12-02T23:14:00.000Z"],
    ["Dec 5, 12:14pm (UTC)", "2026-12-05T12:14:00.000Z"],
    ["Jan 3, 2027, 9am (UTC)", "2027-01-03T09:00:00.000Z"],
    ["Dec 5th, 2026 12:44 PM", "2026-12-05T12:44:00.000Z"],
  ])("%s", (text, want) => {
    expect(iso(parseResetTime(text, at, "UTC"))).toBe(want);
  });
  test("no time, or a zone nobody knows: unknown", () => {
    expect(parseResetTime("later", at)).toBeNull();
    expect(parseResetTime("3pm (Mars/Olympus)", at)).toBeNull();
  });
  test("window names", () => {
    expect([windowName(300), windowName(10080), windowName(90), windowName(null)]).toEqual(["5h", "7d", "90m", undefined]);
  });
});

describe("the screen, second", () => {
  test("claude: the limit line at its prompt (idle), its reset as written", () => {
    const s = screen("claude", "idle-limited-session");
    expect(detectScreen("claude", s).state).toBe("idle");
    expect(screenLimit("claude", s)).toEqual({ id: "hit-your-limit", reason: "You've hit your session limit · resets 2:53am (UTC)", resets_text: "2:53am (UTC)" });
  });
  test("claude: the limit's options are a dialog (blocked), never a prompt", () => {
    expect(detectScreen("claude", screen("claude", "blocked-limit-options"))).toMatchObject({ state: "blocked" });
  });
  test("claude with an API key: Request rejected (429)", () => {
    const text = "❯ hello\n\n● API Error: Request rejected (429) · This request would exceed your account's rate limit. Please try again later.\n\n❯ \n";
    expect(screenLimit("claude", { text })).toMatchObject({ id: "request-rejected-429", reason: expect.stringMatching(/^API Error: Request rejected \(429\)/) });
  });
  test("codex: the curly quote, and the time", () => {
    const s = screen("codex", "idle-limited-usage");
    expect(detectScreen("codex", s).state).toBe("idle");
    expect(screenLimit("codex", s)).toMatchObject({ id: "usage-limit", resets_text: "3:18 AM" });
  });
  test("a screen without a limit line, and a kind without limit rules: none", () => {
    expect(screenLimit("claude", screen("claude", "idle-real-after-answer"))).toBeUndefined();
    expect(screenLimit("gemini", { text: "You've hit your session limit" })).toBeUndefined();
  });
});

describe("the real screens at a limit (captured: capture-screens.ts, claude 2.1.197, codex 0.171.0)", () => {
  const verdict = (kind: string, name: string) => detectScreen(kind, screen(kind, name));
  test("claude, a subscriber: its limit's menu is a dialog of the limit (blocked, never typed into), the limit line above it", () => {
    const s = screen("claude", "blocked-real-limit-options");
    expect(verdict("claude", "blocked-real-limit-options")).toMatchObject({ state: "blocked", dialog: "limit" });
    expect(screenLimit("claude", s)).toEqual({ id: "hit-your-limit", reason: "You've hit your session limit · resets 9:07am (UTC)", resets_text: "9:07am (UTC)" });
  });
  test("claude, the menu dismissed (Esc): at its prompt, the limit line in view; its reset as written, in the zone it names", () => {
    const s = screen("claude", "idle-real-limited-session");
    expect(verdict("claude", "idle-real-limited-session").state).toBe("idle");
    const l = screenLimit("claude", s)!;
    expect(l).toMatchObject({ id: "hit-your-limit", resets_text: "9:08am (UTC)" });
    expect(iso(parseResetTime(l.resets_text!, Date.parse("2026-12-02T07:08:11Z")))).toBe("2026-12-02T09:08:00.000Z");
  });
  test("claude with an API key, 429 with retry-after 3600: the rejected line, no reset", () => {
    expect(verdict("claude", "idle-real-limited-api-key").state).toBe("idle");
    expect(screenLimit("claude", screen("claude", "idle-real-limited-api-key"))).toEqual({
      id: "request-rejected-429",
      reason: "API Error: Request rejected (429) · This request would exceed your account's rate limit. Please try again later.",
    });
  });
  test("codex: its model nudge at the limit is a dialog of the limit (it was read as idle: typed into)", () => {
    expect(verdict("codex", "blocked-real-limit-nudge")).toMatchObject({ state: "blocked", dialog: "limit" });
    expect(screenLimit("codex", screen("codex", "blocked-real-limit-nudge"))).toMatchObject({ id: "usage-limit", resets_text: "9:11 AM" });
  });
  test("codex, the nudge closed: at its prompt, the limit line (curly quote) and its time", () => {
    expect(verdict("codex", "idle-real-limited-usage").state).toBe("idle");
    expect(screenLimit("codex", screen("codex", "idle-real-limited-usage"))).toMatchObject({ id: "usage-limit", reason: expect.stringMatching(/^You've hit your usage limit\. /), resets_text: "9:12 AM" });
  });
});

describe("the real records at a limit (as claude 2.1.197 and codex 0.171.0 wrote them against the endpoint)", () => {
  const CLAUDE_REAL =
    '{"parentUuid":"c13c86b4","isSidechain":false,"type":"assistant","uuid":"1460cbce","timestamp":"2026-12-02T07:07:58.984Z","message":{"id":"f5361761","container":null,"model":"<synthetic>","role":"assistant","stop_details":null,"stop_reason":"stop_sequence","stop_sequence":"","type":"message","usage":{"input_tokens":0,"output_tokens":0},"content":[{"type":"text","text":"You\'ve hit your session limit · resets 9:07am (UTC)"}],"context_management":null},"requestId":"req_mx5sajak2","error":"rate_limit","isApiErrorMessage":true,"apiErrorStatus":429,"userType":"external","entrypoint":"cli","version":"2.1.197"}';
  const CODEX_REAL = [
    '{"timestamp":"2026-12-02T07:11:39.469Z","ordinal":9,"type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"limit_id":"codex","limit_name":null,"primary":{"used_percent":100.0,"window_minutes":300,"resets_at":1796202660},"secondary":{"used_percent":40.0,"window_minutes":10080,"resets_at":1796627499},"credits":null,"individual_limit":null,"spend_control_reached":null,"plan_type":null,"rate_limit_reached_type":null}}}',
    '{"timestamp":"2026-12-02T07:11:39.519Z","ordinal":10,"type":"event_msg","payload":{"type":"task_complete","root_turn_id":"t1","turn_id":"t1","last_agent_message":null,"error":{"message":"You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 9:11 AM.","codex_error_info":"usage_limit_exceeded"},"started_at":1796195498,"completed_at":1796195499,"duration_ms":536}}',
  ];
  const now = Date.parse("2026-12-02T07:12:00Z");
  test("claude: limited until the minute it printed, in the zone it named", () => {
    const v = foldLimit(facts(claude.parse, [CLAUDE_REAL]), now);
    expect(v).toMatchObject({ limited: true, since: Date.parse("2026-12-02T07:07:58.984Z"), resets_at: Date.parse("2026-12-02T09:07:00Z") });
  });
  test("codex: limited until the full window's reset, to the second", () => {
    const v = foldLimit(facts(codex.parse, CODEX_REAL), now);
    expect(v).toMatchObject({ limited: true, resets_at: 1796202660_000, used_percent: 100 });
  });
  test("codex: the model's answer after a continue ends the limit as it arrives, before its tools run (its task_complete comes after the job's end)", () => {
    const call = '{"timestamp":"2026-12-02T07:13:00.100Z","type":"response_item","payload":{"type":"function_call","status":"completed","id":"fc_1","name":"exec_command","arguments":"{\\"cmd\\":\\"mam job event 1 completed\\"}","call_id":"call_1"}}';
    const said = '{"timestamp":"2026-12-02T07:13:00.090Z","type":"response_item","payload":{"type":"message","status":"completed","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"on it"}]}}';
    const typed = '{"timestamp":"2026-12-02T07:13:00.000Z","type":"response_item","payload":{"type":"message","id":"msg_0","role":"user","content":[{"type":"input_text","text":"continue"}]}}';
    const output = '{"timestamp":"2026-12-02T07:13:00.300Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"ok"}}';
    expect(codex.markers.some((m) => call.includes(m)) && codex.markers.some((m) => said.includes(m))).toBe(true);
    expect(foldLimit(facts(codex.parse, [...CODEX_REAL, typed]), now)).toMatchObject({ limited: true });
    expect(foldLimit(facts(codex.parse, [...CODEX_REAL, typed, output]), now)).toMatchObject({ limited: true });
    expect(foldLimit(facts(codex.parse, [...CODEX_REAL, typed, call]), now)).toEqual({ limited: false, used_percent: 100, window_minutes: 300 });
    expect(foldLimit(facts(codex.parse, [...CODEX_REAL, typed, said]), now)).toMatchObject({ limited: false });
  });
});

describe("the daemon's decision (limits.watch): on a transition only", () => {
  const hit = foldLimit(facts(claude.parse, [CLAUDE_197]), NOW);
  const block = { since: "2026-12-02T01:10:00Z", resets_at: "2026-12-02T02:53:00Z", reason: "You've hit your session limit · resets 2:53am (UTC)", source: "records" as const };
  test("not limited → limited, once: the same limit seen again changes nothing", () => {
    expect(decideLimit(undefined, hit, undefined, NOW)).toEqual({ to: "limited", limit: block });
    expect(decideLimit(block, hit, undefined, NOW + 1000)).toBeUndefined();
    expect(decideLimit(undefined, { limited: false }, undefined, NOW)).toBeUndefined();
  });
  test("limited → unlimited: a turn answered, or the reset time passed (records silent)", () => {
    expect(decideLimit(block, foldLimit(facts(claude.parse, [CLAUDE_197, CLAUDE_ANSWER]), NOW), undefined, NOW)).toMatchObject({ to: "unlimited" });
    expect(decideLimit(block, undefined, undefined, Date.parse("2026-12-02T02:53:00Z"))).toMatchObject({ to: "unlimited", why: expect.stringContaining("reset time") });
    expect(decideLimit({ ...block, resets_at: null }, undefined, undefined, NOW + 86_400_000)).toBeUndefined();
  });
  test("a new reset time for the same limit is an update that keeps its start", () => {
    const later = foldLimit(facts(claude.parse, [CLAUDE_332]), NOW);
    expect(decideLimit(block, later, undefined, NOW)).toMatchObject({ to: "update", limit: { since: block.since, resets_at: "2026-12-02T02:59:24Z" } });
  });
  test("the screen, when the records say nothing: a limit line while not at work", () => {
    const line = { reason: "You've hit your session limit · resets 2:53am (UTC)", resets_at: Date.parse("2026-12-02T02:53:00Z") };
    expect(decideLimit(undefined, undefined, { state: "idle", limit: line }, NOW)).toMatchObject({ to: "limited", limit: { source: "screen", resets_at: "2026-12-02T02:53:00Z" } });
    expect(decideLimit(undefined, undefined, { state: "working", limit: line }, NOW)).toBeUndefined();
    expect(decideLimit({ ...block, source: "screen" }, undefined, { state: "working", limit: line }, NOW)).toMatchObject({ to: "unlimited" });
    expect(decideLimit({ ...block, source: "screen" }, undefined, { state: "idle" }, NOW)).toMatchObject({ to: "unlimited" });
  });
});

describe("the registry's limit field", () => {
  const ok = { since: "2026-12-02T01:10:00Z", resets_at: null, reason: "API Error: Request rejected (429)", source: "screen" };
  test("the daemon's shape is accepted; a malformed one names what is wrong", () => {
    expect(limitProblem(undefined)).toBeUndefined();
    expect(limitProblem(ok)).toBeUndefined();
    expect(limitProblem({ ...ok, used_percent: 100, resets_at: "2026-12-02T02:53:00Z" })).toBeUndefined();
    expect(limitProblem("yes")).toContain("limit must be a mapping { since");
    expect(limitProblem({ ...ok, until: 3 })).toContain("'until'");
    expect(limitProblem({ ...ok, since: "soon" })).toBe("limit.since must be an ISO time, got 'soon'");
    expect(limitProblem({ ...ok, resets_at: 1796180364 })).toContain("limit.resets_at must be an ISO time or null");
    expect(limitProblem({ ...ok, reason: "" })).toBe("limit.reason must be one non-empty line");
    expect(limitProblem({ ...ok, source: "hook" })).toContain("limit.source must be records or screen");
    expect(limitProblem({ ...ok, used_percent: "73" })).toContain("limit.used_percent");
  });
  test("validateRegistry refuses a row with a malformed limit", () => {
    const data = { herdr_sessions: [], tmux_sessions: [{ name: "w1", status: "running", limit: { ...ok, source: "guess" } }] };
    expect(validateRegistry(data)).toEqual(["tmux_sessions[0] 'w1' limit.source must be records or screen, got 'guess'"]);
  });
});

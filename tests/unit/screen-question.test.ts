// The question a permission dialog asks, as data (lib/agents/screen/question.ts): read from the
// fixtures captured from the real claude and codex (tests/fixtures/screens/<kind>/*.question.json
// beside their screens), what it reads on each real dialog (Bash command, file edit and create, MCP
// tool, codex's approval prompt), the fingerprint's identity, the choice an answer picks, and the
// rules' validation. The pure half of `mam approve` (unansweredQuestions, what the agent is told after a
// no) too.
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { detectScreen, questionOf, readsQuestions, screenKinds } from "../../lib/agents/screen/detect.ts";
import { choicesLine, compileQuestions, pickChoice, type Question, questionLine, readQuestion, validateQuestions } from "../../lib/agents/screen/question.ts";
import { validateRuleFile } from "../../lib/agents/screen/rules.ts";
import { deniedText, refusedLine, unansweredQuestions } from "../../lib/ops/session/approve.ts";

const FIXTURES = join(import.meta.dir, "..", "fixtures", "screens");
const screen = (kind: string, name: string) => readFileSync(join(FIXTURES, kind, `${name}.txt`), "utf8");
const read = (kind: string, name: string) => questionOf(kind, { text: screen(kind, name) });
const roles = (q: Question | undefined) => q?.choices.map((c) => `${c.n}:${c.key}:${c.role}`);

test("every permission dialog fixture of a kind that reads questions has its expected question (.question.json), every other screen none", () => {
  let n = 0;
  for (const kind of screenKinds().filter(readsQuestions)) {
    for (const f of readdirSync(join(FIXTURES, kind)).filter((x) => x.endsWith(".txt"))) {
      const name = f.slice(0, -4);
      const verdict = JSON.parse(readFileSync(join(FIXTURES, kind, `${name}.json`), "utf8")) as { state: string; dialog?: string };
      const want = join(FIXTURES, kind, `${name}.question.json`);
      const got = read(kind, name) ?? null;
      if (verdict.state === "blocked" && verdict.dialog === "permission") {
        expect({ fixture: `${kind}/${name}`, has: existsSync(want) }).toEqual({ fixture: `${kind}/${name}`, has: true });
        expect({ fixture: `${kind}/${name}`, got }).toEqual({ fixture: `${kind}/${name}`, got: JSON.parse(readFileSync(want, "utf8")) });
        n++;
      } else {
        // idle prompts, working screens, start dialogs (trust, sign-in), question forms: nothing to answer
        expect({ fixture: `${kind}/${name}`, got }).toEqual({ fixture: `${kind}/${name}`, got: null });
      }
    }
  }
  expect(n).toBeGreaterThanOrEqual(10);
});

test("the real claude's dialogs: what each asks, as it shows it, and the key of each choice", () => {
  const bash = read("claude", "blocked-real-permission-bash");
  expect(bash).toMatchObject({ what: "command", title: "Bash command", subject: "mkdir -p build && touch build/out.txt", question: "Do you want to proceed?" });
  expect(roles(bash)).toEqual(["1:1:yes", "2:2:always", "3:3:no"]);
  // a command over two lines, claude's own description after it, and its remark as a note
  const multi = read("claude", "blocked-real-permission-bash-multiline");
  expect(multi).toMatchObject({ subject: "touch made.txt &&\\\n  echo two-lines", notes: ["Contains backslash-escaped whitespace"] });
  expect(multi!.body.at(-1)).toBe("Run shell command");
  expect(roles(multi)).toEqual(["1:1:yes", "2:2:no"]); // no "always" offered
  const edit = read("claude", "blocked-real-permission-edit");
  expect(edit).toMatchObject({ what: "file", title: "Edit file", subject: "a.txt", question: "Do you want to make this edit to a.txt?" });
  expect(edit!.body).toEqual(["a.txt", "1 -one", "1 +two"]);
  expect(edit!.choices[1]).toMatchObject({ label: "Yes, allow all edits during this session (shift+tab)", role: "always", key: "2" });
  const create = read("claude", "blocked-real-permission-create");
  expect(create).toMatchObject({ what: "file", title: "Create file", subject: "notes.txt", question: "Do you want to create notes.txt?" });
  const mcp = read("claude", "blocked-real-permission-mcp");
  expect(mcp).toMatchObject({ what: "tool", title: "Tool use", subject: "mam - job_list (MCP)", question: "Do you want to proceed?" });
  expect(mcp!.choices[1]!.label).toBe("Yes, and don't ask again for mam - job_list commands in /tmp/mam-ra-XXXXXX/ws");
  expect(roles(mcp)).toEqual(["1:1:yes", "2:2:always", "3:3:no"]);
});

test("codex's approval prompt: the command after $, the letters it shows as keys, esc for the no", () => {
  const q = read("codex", "blocked-real-permission-command");
  expect(q).toMatchObject({ what: "command", subject: "touch /var/tmp/mam-capture-escalated.txt", question: "Would you like to run the following command?" });
  expect(q!.body).toEqual(["Environment: local", "Reason: needs to write outside the workspace", "$ touch /var/tmp/mam-capture-escalated.txt"]);
  expect(roles(q)).toEqual(["1:y:yes", "2:p:always", "3:esc:no"]);
  expect(q!.choices[1]!.label).toBe("Yes, and don't ask again for commands that start with `touch /var/tmp/mam-capture-escalated.txt`");
  expect(questionLine(q!)).toBe("Would you like to run the following command? touch /var/tmp/mam-capture-escalated.txt");
  expect(questionLine(read("claude", "blocked-real-permission-bash")!)).toBe("Bash command: mkdir -p build && touch build/out.txt — Do you want to proceed?");
});

test("the fingerprint is the question's: the same dialog anywhere on screen, with the selection moved, is the same; another command, edit or choice is another", () => {
  const text = screen("claude", "blocked-real-permission-bash");
  const fp = questionOf("claude", { text })!.fingerprint;
  expect(fp).toMatch(/^[0-9a-f]{16}$/);
  // more transcript above it, the selection on choice 2, a spinner line elsewhere: same question
  const moved = `● an earlier answer\n● another one\n${text.replace(" ❯ 1. Yes", "   1. Yes").replace("   2. Yes,", " ❯ 2. Yes,")}`;
  expect(questionOf("claude", { text: moved })!.fingerprint).toBe(fp);
  expect(questionOf("claude", { text: text.replace("mkdir -p build && touch build/out.txt\n", "mkdir -p build && touch build/other.txt\n") })!.fingerprint).not.toBe(fp);
  expect(questionOf("claude", { text: text.replace("   3. No", "   3. No, and tell Claude what to do differently (esc)") })!.fingerprint).not.toBe(fp);
  const edit = screen("claude", "blocked-real-permission-edit");
  expect(questionOf("claude", { text: edit.replace(" 1 +two", " 1 +three") })!.fingerprint).not.toBe(questionOf("claude", { text: edit })!.fingerprint);
  // the dialog of another kind's rules is not read as claude's
  expect(questionOf("codex", { text })).toBeUndefined();
});

test("the choice an answer picks: the one-time yes by default, the no with deny, any by its number; never an always unless named", () => {
  const q = read("claude", "blocked-real-permission-bash")!;
  expect(pickChoice(q, {})).toMatchObject({ n: 1, role: "yes" });
  expect(pickChoice(q, { deny: true })).toMatchObject({ n: 3, role: "no" });
  expect(pickChoice(q, { choice: 2 })).toMatchObject({ n: 2, role: "always" });
  expect(pickChoice(q, { choice: 4 })).toBeUndefined();
  // a dialog whose only yes is an "always": the default picks nothing
  const onlyAlways = { choices: [{ n: 1, label: "Yes, always", key: "1", role: "always" as const }, { n: 2, label: "No", key: "2", role: "no" as const }] };
  expect(pickChoice(onlyAlways, {})).toBeUndefined();
  expect(choicesLine(q)).toBe("1 Yes · 2 Yes, and don't ask again for mkdir -p build and touch build/out.txt commands in /tmp/mam-ra-XXXXXX/ws (always) · 3 No");
});

test("a wrapped label continues its choice; a screen whose choices are not 1..k, or with no question above them, is not read", () => {
  const rules = compileQuestions(validateQuestions(JSON.parse(readFileSync(join(import.meta.dir, "..", "..", "lib", "agents", "kinds", "claude.screen.json"), "utf8")).questions));
  const base = " Bash command\n   ls\n   List\n Do you want to proceed?\n ❯ 1. Yes\n   2. Yes, and don't ask again for ls\n      commands in /a/very/long/path\n   3. No\n Esc to cancel";
  const q = readQuestion("claude", rules, base)!;
  expect(q.choices[1]!.label).toBe("Yes, and don't ask again for ls commands in /a/very/long/path");
  expect(readQuestion("claude", rules, base.replace("   3. No", "   4. No"))).toBeUndefined();
  expect(readQuestion("claude", rules, base.replace(" Do you want to proceed?\n", ""))).toBeUndefined();
  expect(readQuestion("claude", rules, base.replace(" Bash command\n", ""))).toBeUndefined();
});

test("question rules are checked when the rules file is: a bad one names the rule and the problem", () => {
  const ok = { id: "q", what: "command", heading: "^h$", question: "^q\\?$", choice: "^(?<n>\\d+)\\. (?<label>.+)$", subject: "first", roles: { yes: "^yes", no: "^no" } };
  const file = (q: unknown) => ({ kind: "k", rules: [{ id: "r", state: "idle", priority: 1, region: "screen", any: ["x"] }], questions: [q] });
  expect(() => validateRuleFile("k", file(ok))).not.toThrow();
  const bad: [unknown, string][] = [
    [{ ...ok, what: "thing" }, `question "q": "what" must be command, file, tool or other`],
    [{ ...ok, choice: "^(\\d+)\\. (.+)$" }, `"choice" needs the named groups n and label`],
    [{ ...ok, subject: "(" }, `bad regex`],
    [{ ...ok, subject: "^\\$ .+$" }, `"subject" as a regex needs a group`],
    [{ ...ok, roles: { yes: "^yes" } }, `"roles" needs yes and no`],
    [{ ...ok, roles: { yes: "^yes", no: "^no", maybe: "x" } }, `"roles.maybe" is not always/no/yes`],
    [{ ...ok, extra: 1 }, `unknown field "extra"`],
    [{ ...ok, keys: { esc: 3 } }, `"keys" must map a shown key to a key name`],
  ];
  for (const [q, msg] of bad) expect(() => validateRuleFile("k", file(q))).toThrow(msg);
  expect(() => validateRuleFile("k", { ...file(ok), questions: [] })).toThrow(`"questions" must be a non-empty list`);
});

test("unansweredQuestions: the job's questions since its last answer, of that session, distinct", () => {
  type E = Parameters<typeof unansweredQuestions>[0][number];
  const pr = (fp: string, session = "wrk", source = "monitor"): E => ({ event: "permission_required", source, data: { session, question: { fingerprint: fp } } });
  const ans = (event: "approved" | "denied"): E => ({ event, source: "mam", data: {} });
  expect(unansweredQuestions([pr("a"), pr("a")], "wrk")).toEqual(["a"]);
  expect(unansweredQuestions([pr("a"), ans("approved"), pr("b")], "wrk")).toEqual(["b"]);
  expect(unansweredQuestions([pr("a"), pr("b")], "wrk")).toEqual(["a", "b"]);
  expect(unansweredQuestions([pr("a", "rev"), pr("b")], "wrk")).toEqual(["b"]);
  // an agent's own report carries no question
  expect(unansweredQuestions([{ event: "permission_required", source: "wrk", data: {} }], "wrk")).toEqual([]);
  // only the daemon's: a question an agent journalled (before review B2 closed that) is not one the user was shown
  expect(unansweredQuestions([pr("a", "wrk", "wrk"), pr("b")], "wrk")).toEqual(["b"]);
  expect(unansweredQuestions([pr("a", "wrk", "agent")], "wrk")).toEqual([]);
  expect(unansweredQuestions([pr("a"), ans("denied")], "wrk")).toEqual([]);
});

test("after a no the agent is told what was refused without the dialog's own words: in its transcript they would read as the dialog again", () => {
  let n = 0;
  for (const kind of screenKinds().filter(readsQuestions)) {
    const idle = screen(kind, "idle-real-prompt").split("\n");
    for (const f of readdirSync(join(FIXTURES, kind)).filter((x) => x.endsWith(".question.json"))) {
      const q = JSON.parse(readFileSync(join(FIXTURES, kind, f), "utf8")) as Question | null;
      if (!q) continue; // a dialog no rule reads: mam answers nothing, tells nothing
      const told = deniedText("ann", q, "1a2b3c4d", "mam job event 1a2b3c4d error --source wrk --detail \"what could not be done without it\"");
      expect(told).toContain(`[mam] ann said no to ${refusedLine(q)} (job 1a2b3c4d)`);
      expect(told).toContain(q.subject.split("\n")[0]!);
      expect(told.toLowerCase()).not.toContain(q.question.toLowerCase());
      // the told text in the transcript, above the idle prompt: still idle, no question read
      const shown = [...idle.slice(0, 6), ...told.split("\n").map((l) => `  ${l}`), ...idle.slice(6)].join("\n");
      expect({ f, state: detectScreen(kind, { text: shown }).state }).toEqual({ f, state: "idle" });
      expect(questionOf(kind, { text: shown })).toBeUndefined();
      n++;
    }
  }
  expect(n).toBeGreaterThanOrEqual(10);
  const codex = read("codex", "blocked-real-permission-command")!;
  expect(refusedLine(codex)).toBe("the command: touch /var/tmp/mam-capture-escalated.txt");
  expect(refusedLine(read("claude", "blocked-real-permission-edit")!)).toBe("Edit file: a.txt");
  // a heading that is the question: named by what is asked
  expect(refusedLine({ title: "Allow?", question: "Allow?", subject: "", what: "other" })).toBe("the request");
});

test("choice roles fail closed (review A6): look-alike characters are normalised before any rule; only an exact one-time yes label is the yes", () => {
  const base = screen("claude", "blocked-real-permission-bash");
  const always = base.split("\n").find((l) => /don't ask again/.test(l))!;
  // a curly apostrophe (U+2019): still the "always", never pressed by default
  const curly = read2(base.replace(always, always.replace("don't", "don\u2019t")));
  expect(roles(curly)).toEqual(["1:1:yes", "2:2:always", "3:3:no"]);
  expect(pickChoice(curly!, {})).toMatchObject({ n: 1, label: "Yes" });
  // a wording no rule knows, starting with yes: not a one-time yes; with no other yes, nothing is pressed by default
  const unknown = read2(base.replace(always, always.replace(/Yes, and don't ask again.*$/, "Yes, allow from now on")).replace(/(\d\. )Yes$/m, "$1Yes, once"));
  expect(roles(unknown)).toEqual(["1:1:other", "2:2:other", "3:3:no"]);
  expect(pickChoice(unknown!, {})).toBeUndefined();
  // non-breaking spaces, fullwidth letters and unicode dashes read as their ASCII look-alikes
  const nbsp = read2(base.replace(/(\d\.) Yes$/m, "$1\u00a0\uff39\uff45\uff53"));
  expect(roles(nbsp)?.[0]).toBe("1:1:yes");
  const dash = read2(base.replace(always, always.replace("don't", "don\u2019t").replace("Yes,", "Yes\u2014")));
  expect(roles(dash)?.[1]).toBe("2:2:always");
  // the real dialogs' one-time yes labels are still the yes
  expect(roles(read("claude", "blocked-real-permission-bash"))?.[0]).toBe("1:1:yes");
});
const read2 = (text: string) => questionOf("claude", { text });

test("claude 2.1.332's permission dialog: its `switch to auto mode` choice is never the one-time yes nor an always; No moves to 4; the trust dialog without numbers is no question", () => {
  const q = read("claude", "blocked-332-permission-bash")!;
  expect(roles(q)).toEqual(["1:1:yes", "2:2:always", "3:3:other", "4:4:no"]);
  expect(pickChoice(q, {})).toMatchObject({ n: 1, label: "Yes" });
  expect(pickChoice(q, { deny: true })).toMatchObject({ n: 4, label: "No" });
  // the real 2.1.332 screen: the tip and claude's description come first, the command is what the
  // ╌ rules frame (rule bash-framed); the tip and the description are notes, not the subject
  expect(q).toMatchObject({ rule: "bash-framed", subject: "touch made-by-claude.txt", body: ["touch made-by-claude.txt"] });
  expect(q.notes).toEqual(['Tip: auto mode handles these prompts for you — choose "switch to auto mode" below', "Run a command"]);
  // 2.1.197's dialog has no frame: the framed rule leaves it to the bash rule, as before
  expect(read("claude", "blocked-real-permission-bash")).toMatchObject({ rule: "bash", subject: "mkdir -p build && touch build/out.txt" });
  // and status names the command, not the tip
  expect(detectScreen("claude", { text: screen("claude", "blocked-332-permission-bash") }).reason).toBe("Bash command: touch made-by-claude.txt — Do you want to proceed?");
  expect(read("claude", "blocked-332-trust")).toBeUndefined();
});

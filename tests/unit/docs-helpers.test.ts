// The docs test's reading of Markdown (tests/helpers/docs.ts): runnable blocks, shown output,
// links and anchors.
import { expect, test } from "bun:test";
import { headingAnchors, headings, localLinks, outputMatches, runnableBlocks } from "../helpers/docs.ts";

const F = "```";

test("runnable blocks: console transcripts and sh scripts; unmarked blocks are illustrative", () => {
  const md = [
    `${F}sh`, "mam create --agent claude", F,
    `${F}console runnable`, "$ mam status", "NAME  AGENT", "$ id=$(mam job submit \\", "  --to w)", "$ echo done", "done", "", F,
    `${F}sh runnable`, "mam --version", F,
  ].join("\n");
  const b = runnableBlocks(md);
  expect(b.map((x) => [x.kind, x.line])).toEqual([["console", 4], ["sh", 13]]);
  expect(b[0]!.steps).toEqual([
    { cmd: "mam status", shown: ["NAME  AGENT"] },
    { cmd: "id=$(mam job submit \\\n  --to w)", shown: [] },
    { cmd: "echo done", shown: ["done"] },
  ]);
  expect(b[1]!.script).toBe("mam --version");
  expect(() => runnableBlocks(`${F}text runnable\nx\n${F}`)).toThrow(/console runnable/);
});

test("shown output: exact lines, … for any text in a line, a … line for any lines", () => {
  expect(outputMatches(["a", "b"], "a\nb\n")).toBe(true);
  expect(outputMatches(["a", "b"], "a\nc\n")).toBe(false);
  expect(outputMatches(["a"], "a\nb\n")).toBe(false);
  expect(outputMatches(["job … completed"], "job 3f9a0c1d completed\n")).toBe(true);
  expect(outputMatches(["job … completed"], "job 3f9a0c1d error\n")).toBe(false);
  expect(outputMatches(["…", "last"], "x\ny\nlast\n")).toBe(true);
  expect(outputMatches(["first", "…"], "first\n")).toBe(true);
  expect(outputMatches(["a (b) [c]"], "a (b) [c]   \n")).toBe(true);
});

test("links outside code; GitHub's anchors, repeats numbered", () => {
  const md = "# Mam — the `tool`\n## Install\n## Install\nsee [x](docs/a.md#b-c), `[no](code.md)`, [web](https://x.y)\n```\n[no](block.md)\n# not a heading\n```\n";
  expect(localLinks(md)).toEqual([{ target: "docs/a.md", anchor: "b-c", line: 4 }]);
  expect(headings(md)).toEqual(["Mam — the `tool`", "Install", "Install"]);
  expect([...headingAnchors(md)]).toEqual(["mam--the-tool", "install", "install-1"]);
});

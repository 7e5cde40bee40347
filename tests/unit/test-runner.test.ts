// the test runner repeats, at the end of its output, the errors of failed tests and of tests that
// passed only on their retry (a CI log that keeps only the tail must still say why)
import { describe, expect, test } from "bun:test";
import { exactName, failedTests, failuresAgain } from "../../scripts/test.ts";

const OUT = [
  "a.test.ts:",
  "(pass) passes [0.11ms]",
  "4 | test(\"flaky\", () => {});",
  "                ^",
  "error: expect(received).toBe(expected)",
  "",
  "Expected: 2",
  "Received: 1",
  "      at <anonymous> (/tmp/a.test.ts:4:38)",
  "(pass) flaky (attempt 2) [0.02ms]",
  "5 | test(\"fails\", () => {});",
  "error: first attempt",
  "      at <anonymous> (/tmp/a.test.ts:5:37)",
  "5 | test(\"fails\", () => {});",
  "error: second attempt",
  "(fail) fails (attempt 2) [0.03ms]",
  "(skip) skipped",
  "",
  " 2 pass",
].join("\n");

describe("failuresAgain", () => {
  test("each failed or retried test with its first error, the source excerpt left out", () => {
    const again = failuresAgain(OUT);
    expect(again).toContain("(pass) flaky (attempt 2) [0.02ms]\n    error: expect(received).toBe(expected)\n    Expected: 2\n    Received: 1\n");
    expect(again).toContain("(fail) fails (attempt 2) [0.03ms]\n    error: first attempt\n          at <anonymous> (/tmp/a.test.ts:5:37)\n");
    expect(again).not.toContain("second attempt");
    expect(again).not.toContain("(pass) passes");
    expect(again).not.toContain("(skip)");
  });
  test("nothing failed: nothing printed; a bounded number of tests and lines", () => {
    expect(failuresAgain("a.test.ts:\n(pass) ok\n")).toBe("");
    const many = Array.from({ length: 30 }, (_, i) => `error: e${i}\n${"x\n".repeat(50)}(fail) t${i}`).join("\n");
    const again = failuresAgain(many, 3, 5);
    expect(again.match(/^\(fail\)/gm)).toHaveLength(3);
    expect(again.split("\n").filter((l) => l === "    x")).toHaveLength(12);
  });
});

describe("a failed test runs once more alone", () => {
  const PARALLEL = [
    "a.test.ts:",
    "(pass) a0 [63.61ms]",
    "",
    "b.test.ts:",
    "(fail) outer (x) > slow [1008.30ms]",
    "  ^ this test timed out after 1000ms.",
    "",
    "a.test.ts:",
    "error: boom",
    "(fail) flaky [12.00ms]",
    "(fail) no time",
  ].join("\n");

  test("failedTests: each failed test with the file whose header came last (bun --parallel interleaves files)", () => {
    expect(failedTests(PARALLEL)).toEqual([
      { file: "b.test.ts", name: "outer (x) > slow" },
      { file: "a.test.ts", name: "flaky" },
      { file: "a.test.ts", name: "no time" },
    ]);
  });

  test("bun's recap after the last file (its failed tests again) is not read as failures of that file", () => {
    const out = [...PARALLEL.split("\n"), "", "c.test.ts:", "(pass) c0", "", "", "3 tests failed:", "(fail) outer (x) > slow [1008.30ms]", "(fail) flaky [12.00ms]", "(fail) no time", "", " 1 pass", " 3 fail"].join("\n");
    expect(failedTests(out)).toEqual(failedTests(PARALLEL));
    expect(failuresAgain(out)).toBe(failuresAgain(PARALLEL));
    expect(failuresAgain(out)).not.toContain("tests failed:");
  });

  test("a first attempt that timed out is shown with its timeout (bun prints it after the result line)", () => {
    expect(failuresAgain(PARALLEL)).toContain("(fail) outer (x) > slow [1008.30ms]\n    ^ this test timed out after 1000ms.");
  });

  test("exactName: a -t pattern for that test alone, special characters escaped, ' > ' either way", () => {
    const re = new RegExp(exactName("outer (x) > in > y [z]"));
    expect(re.test("outer (x) in > y [z]")).toBe(true); // how bun matches -t
    expect(re.test("outer (x) in y [z]")).toBe(true);
    expect(re.test("outer (x) in > y [z] and more")).toBe(false);
    expect(re.test("outer x in > y [z]")).toBe(false);
  });
});

// the test runner repeats, at the end of its output, the errors of failed tests and of tests that
// passed only on their retry (a CI log that keeps only the tail must still say why)
import { describe, expect, test } from "bun:test";
import { failuresAgain } from "../../scripts/test.ts";

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

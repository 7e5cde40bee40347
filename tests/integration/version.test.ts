// One version (issue 38 item 1): package.json's version is mam's, and every place that shows it
// reads it from the build: `mam --version`, `mam --version --json` (with the Bun that built it and
// the build target), the MCP server's serverInfo and the dashboard's footer.
import { afterAll, expect, test } from "bun:test";
import pkg from "../../package.json" with { type: "json" };
import { startUiProcess } from "../helpers/browser.ts";
import { MAM_BIN, MAM_CMD, runMam } from "../helpers/mam.ts";
import { makeSandbox } from "../helpers/sandbox.ts";

const sb = makeSandbox("mam-version-");
afterAll(() => sb.cleanup());
const mam = (...args: string[]) => runMam(args, { env: sb.env, cwd: sb.ws });

test("mam --version is package.json's version", async () => {
  const r = await mam("--version");
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(new RegExp(`^mam ${pkg.version.replaceAll(".", "\\.")} \\([0-9a-z-]+\\)\\n$`));
});

test("mam --version --json: version, commit, the Bun that built it, the build target, where it runs", async () => {
  const r = await mam("--version", "--json");
  expect(r.code).toBe(0);
  expect(r.stderr).toBe("");
  const v = JSON.parse(r.stdout) as Record<string, string>;
  expect(v.version).toBe(pkg.version);
  expect(v.commit).toMatch(/^[0-9a-z-]+$/);
  expect(v.bun).toBe(Bun.version);
  expect(v.os).toBe(process.platform);
  expect(v.arch).toBe(process.arch);
  // the compiled binary knows its target; `bun mam.ts` says it runs from source
  expect(v.target).toBe(MAM_BIN ? `bun-${process.platform}-${process.arch}` : "source");
  expect((await mam("version", "--json")).stdout).toBe(r.stdout);
  expect((await mam("-V", "--json")).stdout).toBe(r.stdout);
});

test("the MCP server's serverInfo carries the version", async () => {
  const p = Bun.spawn([...MAM_CMD, "mcp", "--workspace", sb.ws], { cwd: sb.ws, env: sb.env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  try {
    const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } };
    p.stdin.write(`${JSON.stringify(init)}\n`);
    await p.stdin.flush();
    let got = "";
    const dec = new TextDecoder();
    const reader = (p.stdout as ReadableStream<Uint8Array>).getReader();
    while (!got.includes("\n")) {
      const c = await reader.read();
      if (c.done) break;
      got += dec.decode(c.value, { stream: true });
    }
    const answer = JSON.parse(got.split("\n")[0]!) as { result: { serverInfo: { name: string; version: string } } };
    expect(answer.result.serverInfo).toEqual({ name: "mam", version: pkg.version });
  } finally {
    p.kill();
    await p.exited;
  }
});

test("the dashboard's footer shows the version", async () => {
  const ui = await startUiProcess(sb, sb.env);
  try {
    const res = await fetch(ui.url);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain(`<footer class="dim" id="version">mam ${pkg.version}</footer>`);
  } finally {
    await ui.stop("SIGTERM");
  }
});

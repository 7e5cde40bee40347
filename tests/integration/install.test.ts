// scripts/install.sh against a local release folder (file:// and loopback HTTP).
import { afterAll, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { MAM_CMD, ROOT, run } from "../helpers/mam.ts";
import { makeSandbox } from "../helpers/sandbox.ts";

const sb = makeSandbox("mam-inst-");
const bin = MAM_CMD[0]!;
const arch = process.arch === "arm64" ? "arm64" : "x64";
const name = `mam-9.8.7-linux-${arch}`;
const rel = join(sb.root, "release");
mkdirSync(rel);
copyFileSync(bin, join(rel, name));
const sum = createHash("sha256").update(readFileSync(join(rel, name))).digest("hex");
writeFileSync(join(rel, "SHA256SUMS"), `${sum}  ${name}\n${"0".repeat(64)}  mam-9.8.7-darwin-arm64\n`);

const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => new Response(Bun.file(join(rel, new URL(req.url).pathname.slice(1)))) });
afterAll(async () => {
  server.stop(true);
  await sb.cleanup();
});
const install = (url: string, dir: string, ...args: string[]) =>
  run(["bash", join(ROOT, "scripts", "install.sh"), "--dir", dir, ...args], { env: sb.with({ MAM_RELEASE_URL: url }) });

test.skipIf(process.env.MAM_BIN === undefined || process.platform !== "linux")("installs the latest from a file:// folder after checking the sum", async () => {
  const dir = join(sb.root, "bin1");
  const r = await install(`file://${rel}`, dir);
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^installed mam \S+ \(\S+\) to /);
  const v = await run([join(dir, "mam"), "--version"], { env: sb.env });
  expect(v.stdout).toMatch(/^mam /);
});

test.skipIf(process.env.MAM_BIN === undefined || process.platform !== "linux")("installs a given version over loopback HTTP", async () => {
  const dir = join(sb.root, "bin2");
  const r = await install(`http://127.0.0.1:${server.port}`, dir, "--version", "9.8.7");
  expect(r.code).toBe(0);
  expect(existsSync(join(dir, "mam"))).toBe(true);
});

test("a checksum mismatch installs nothing", async () => {
  const bad = join(sb.root, "bad");
  mkdirSync(bad);
  writeFileSync(join(bad, name), "not mam");
  writeFileSync(join(bad, "SHA256SUMS"), `${sum}  ${name}\n`);
  const dir = join(sb.root, "bin3");
  const r = await install(`file://${bad}`, dir);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("checksum mismatch");
  expect(existsSync(join(dir, "mam"))).toBe(false);
});

test("a version that is not released fails clearly", async () => {
  const r = await install(`file://${rel}`, join(sb.root, "bin4"), "--version", "1.0.0");
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("is not listed in SHA256SUMS");
});

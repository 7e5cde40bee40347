// bench area `mcp` (issue 17): `mam mcp` driven by the SDK's client over stdio, on the fake herdr.
//   (a) a `status` tool call round trip with 20 sessions, warm server (after 5 calls), 50 calls
//   (b) the server's RSS, idle for 3 s after those calls, and right after the handshake
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildFakeHerdr } from "../scripts/test.ts";
import { medP90, pct, procUsage, registryYaml, type Row } from "./common.ts";

const rssMiB = (pid: number) => procUsage(pid).rssKiB / 1024;

export async function benchMcp(bin: string): Promise<Row[]> {
  await buildFakeHerdr();
  const { makeSandbox } = await import("../tests/helpers/sandbox.ts");
  const { installFakeAgents, startFakeHerdr } = await import("../tests/helpers/herdr.ts");
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const sb = makeSandbox("mam-bench-m-");
  const server = "mam";
  installFakeAgents(sb.bin);
  const h = await startFakeHerdr(sb, { session: server });
  const ws = join(sb.root, "ws-mcp");
  mkdirSync(join(ws, ".mam"), { recursive: true });
  writeFileSync(join(ws, ".mam", "agent-sessions.yaml"), registryYaml(20, { server, ws, paneWs: "w9" }));
  const transport = new StdioClientTransport({ command: bin, args: ["mcp", "--workspace", ws], env: sb.env, cwd: ws, stderr: "inherit" });
  const client = new Client({ name: "mam-bench", version: "1" });
  try {
    await client.connect(transport);
    const pid = transport.pid!;
    const afterHandshake = rssMiB(pid);
    const times: number[] = [];
    for (let i = 0; i < 55; i++) {
      const t0 = performance.now();
      const r = (await client.callTool({ name: "status", arguments: {} })) as { isError?: boolean; structuredContent?: { sessions: unknown[] } };
      const dt = performance.now() - t0;
      if (r.isError || r.structuredContent?.sessions.length !== 20) throw new Error(`status tool call failed: ${JSON.stringify(r).slice(0, 300)}`);
      if (i >= 5) times.push(dt);
    }
    await Bun.sleep(3000);
    const idle = rssMiB(pid);
    const med = pct(times, 50);
    return [
      { what: "`mam mcp`: `status` tool call round trip, 20 sessions, fake herdr, warm server (median / p90)", target: "≤ 30 ms median", measured: medP90(times), ok: med <= 30 },
      { what: "`mam mcp`: server RSS idle after 55 calls (right after the handshake)", target: "≤ 60 MiB", measured: `${idle.toFixed(1)} MiB (${afterHandshake.toFixed(1)} MiB)`, ok: idle <= 60 },
    ];
  } finally {
    await client.close();
    await h.stop();
    await sb.cleanup();
  }
}

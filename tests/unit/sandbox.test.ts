// The sandbox's pure parts (docs/sandbox.md): the plan's mounts and their order, bwrap's words for
// them, what goes through from inside, the relays' split and the CONNECT proxy, the options.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { refuseForward } from "../../lib/sandbox/forward.ts";
import { bwrapArgs, explainText, type PlanInput, parseEndpoint, refusal, sandboxPlan } from "../../lib/sandbox/plan.ts";
import { connectTarget, listenIn, relaysFor, serveOut, serveProxy } from "../../lib/sandbox/relay.ts";
import { askedSpec, modelEndpoints, rowSandbox } from "../../lib/sandbox/spec.ts";
import { insideArgv } from "../../lib/sandbox/inputs.ts";
import { badDefault } from "../../lib/sandbox/default.ts";

const base: PlanInput = { home: "/home/u", ws: "/home/u/proj", cwd: "/home/u/proj", ro: [], rw: ["/home/u/.claude", "/home/u/.claude.json"], socketDir: "/tmp/mam-sbx-1", net: "none" };
const paths = (i: PlanInput) => sandboxPlan(i).mounts.map((m) => `${m.type} ${m.path}`);

describe("the plan", () => {
  test("the system read-only, the hidden roots empty, the workspace read-write with .mam/ empty, the agent's store over HOME, the sockets last", () => {
    expect(paths(base)).toEqual([
      "ro /",
      "dev /dev",
      "proc /proc",
      "tmpfs /tmp",
      "tmpfs /run",
      "tmpfs /var/tmp",
      "tmpfs /home/u",
      "rw /home/u/proj",
      "rw /home/u/.claude",
      "rw /home/u/.claude.json",
      "tmpfs /home/u/proj/.mam",
      "rw /run/mam",
    ]);
  });

  test("an agent in a worktree: the workspace empty but for its .git and the worktree", () => {
    const p = paths({ ...base, cwd: "/home/u/proj/.mam/worktrees/w", rw: [] });
    expect(p.slice(3)).toEqual(["tmpfs /tmp", "tmpfs /run", "tmpfs /var/tmp", "tmpfs /home/u", "tmpfs /home/u/proj", "rw /home/u/proj/.git", "rw /home/u/proj/.mam/worktrees/w", "rw /run/mam"]);
  });

  test("what it runs is bound again only where a hidden root would hide it", () => {
    const p = paths({ ...base, rw: [], ro: ["/usr/bin", "/home/u/.local/bin", "/home/u/.nvm/versions/node/v22", "/home/u/proj/node_modules/x", "/tmp/build/mam"] });
    expect(p).toContain("ro /home/u/.local/bin");
    expect(p).toContain("ro /home/u/.nvm/versions/node/v22");
    expect(p).toContain("ro /tmp/build/mam");
    expect(p).not.toContain("ro /usr/bin"); // the system is there already
    expect(p).not.toContain("ro /home/u/proj/node_modules/x"); // inside the read-write workspace
  });

  test("deeper mounts come after shallower ones, whatever order they were given in", () => {
    const p = sandboxPlan({ ...base, ws: "/tmp/t/ws", cwd: "/tmp/t/ws", home: "/tmp/t/home", rw: ["/tmp/t/home/.claude"] }).mounts.map((m) => m.path);
    const depth = (x: string) => x.split("/").filter(Boolean).length;
    const layers = p.slice(3, -1);
    expect(layers.map(depth)).toEqual([...layers.map(depth)].sort((a, b) => a - b));
    expect(p.indexOf("/tmp/t/ws/.mam")).toBeGreaterThan(p.indexOf("/tmp/t/ws"));
  });

  test("a workspace that holds the home folder is refused", () => {
    expect(refusal({ home: "/home/u", ws: "/home/u" })).toContain("cannot hide ~/.ssh");
    expect(refusal({ home: "/home/u", ws: "/home" })).toContain("holds the home folder");
    expect(refusal({ home: "/home/u", ws: "/home/u/proj" })).toBeUndefined();
  });

  test("bwrap's words: binds, optional ones -try, namespaces, the network only with net all", () => {
    const a = bwrapArgs(sandboxPlan({ ...base, ro: ["/home/u/.local/bin"] }), { MAM_SANDBOX: "bwrap" });
    expect(a.slice(0, 6)).toEqual(["--ro-bind", "/", "/", "--dev", "/dev", "--proc"]);
    expect(a.join(" ")).toContain("--ro-bind-try /home/u/.local/bin /home/u/.local/bin");
    expect(a.join(" ")).toContain("--bind /tmp/mam-sbx-1 /run/mam");
    expect(a.join(" ")).toContain("--tmpfs /home/u/proj/.mam");
    expect(a).toContain("--unshare-net");
    expect(a).toContain("--die-with-parent");
    expect(a.join(" ")).toContain("--setenv MAM_SANDBOX bwrap");
    expect(bwrapArgs(sandboxPlan({ ...base, net: "all" }), {})).not.toContain("--unshare-net");
  });

  test("explain lists each mount and the network", () => {
    const t = explainText(sandboxPlan({ ...base, net: "model" }), ["api.anthropic.com:443"]);
    expect(t).toContain("works in: /home/u/proj");
    expect(t).toMatch(/\/home\/u\/proj\/\.mam\s+empty\s+mam's state, hidden/);
    expect(t).toContain("network: model: its own loopback; only the endpoints below, through mam's relays\n  api.anthropic.com:443");
  });

  test("endpoints", () => {
    expect(parseEndpoint("api.anthropic.com:443")).toEqual({ host: "api.anthropic.com", port: 443 });
    expect(parseEndpoint("[::1]:8080")).toEqual({ host: "::1", port: 8080 });
    for (const bad of ["nohost", "a:0", "a:70000", "a b:1", ":80", "http://a:1"]) expect(parseEndpoint(bad)).toBeUndefined();
  });
});

describe("what goes through from inside", () => {
  const jobs: Record<string, string> = { aaaaaaaa: "w1", bbbbbbbb: "w2" };
  const why = (argv: string[]) => refuseForward(argv, "w1", "/ws", (id) => jobs[id]);
  test("its own job's events and status, status, its hooks", () => {
    expect(why(["job", "event", "aaaaaaaa", "started", "--source", "w1", "--workspace", "/ws"])).toBeUndefined();
    expect(why(["job", "status", "aaaaaaaa"])).toBeUndefined();
    expect(why(["status", "--json"])).toBeUndefined();
    expect(why(["agent-report", "--hook", "claude"])).toBeUndefined();
  });
  test("another's job, another workspace, a token, another session, other commands", () => {
    expect(why(["job", "event", "bbbbbbbb", "completed"])).toBe("job bbbbbbbb is not w1's: a sandboxed agent reports on its own jobs only");
    expect(why(["job", "event", "cccccccc", "completed"])).toBe("no job cccccccc in this workspace");
    expect(why(["job", "event", "--detail", "x", "aaaaaaaa", "completed"])).toBe("give the job id first: mam job event ID …");
    expect(why(["job", "event", "aaaaaaaa", "completed", "--workspace=/other"])).toBe("--workspace /other: a sandboxed agent acts in its own workspace (/ws) only");
    expect(why(["job", "event", "aaaaaaaa", "completed", "--token", "t"])).toContain("--token is not taken");
    expect(why(["agent-report", "--hook", "claude", "--session", "w2"])).toContain("--session is not taken");
    expect(why(["job", "submit", "--to", "w2"])).toContain("inside a sandbox mam runs only");
    expect(why(["create"])).toContain("inside a sandbox mam runs only");
    expect(why(["job", "status", "../../etc"])).toBe("invalid job id '../../etc' (8 lowercase hex digits)");
  });
});

describe("the relays", () => {
  test("loopback endpoints relayed at their address, the others through the proxy", () => {
    expect(relaysFor(["127.0.0.1:8080", "api.anthropic.com:443", "localhost:9"])).toEqual({ local: [["127.0.0.1:8080", "net-0.sock"], ["localhost:9", "net-2.sock"]], remote: ["api.anthropic.com:443"] });
    expect(connectTarget("CONNECT api.anthropic.com:443 HTTP/1.1\r\nHost: x\r\n\r\n")).toBe("api.anthropic.com:443");
    expect(connectTarget("GET / HTTP/1.1\r\n\r\n")).toBeUndefined();
  });

  test("the CONNECT proxy opens a tunnel to an allowed endpoint only; a relay joins TCP inside to the endpoint outside", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mam-relay-"));
    const target = createServer((c) => c.on("data", (d) => c.end(`echo:${d}`)));
    await new Promise<void>((r) => target.listen(0, "127.0.0.1", r));
    const port = (target.address() as { port: number }).port;
    const proxy = serveProxy(join(dir, "proxy.sock"), [`127.0.0.1:${port}`]);
    const inner = await listenIn("127.0.0.1", 0, join(dir, "proxy.sock"));
    const innerPort = (inner.address() as { port: number }).port;
    const out = serveOut(join(dir, "net-0.sock"), `127.0.0.1:${port}`);
    const relay = await listenIn("127.0.0.1", 0, join(dir, "net-0.sock"));
    const talk = (p: number, send: string) =>
      new Promise<string>((resolve) => {
        const c = createConnection({ host: "127.0.0.1", port: p }, () => c.write(send));
        let got = "";
        c.on("data", (d) => {
          got += d;
          if (got.includes("\r\n\r\n") && got.startsWith("HTTP/1.1 200")) c.write("hi");
        });
        c.on("close", () => resolve(got));
        c.on("error", () => resolve(got));
      });
    try {
      expect(await talk(innerPort, `CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: x\r\n\r\n`)).toBe("HTTP/1.1 200 Connection Established\r\n\r\necho:hi");
      expect(await talk(innerPort, "CONNECT 127.0.0.1:1 HTTP/1.1\r\n\r\n")).toStartWith("HTTP/1.1 403 Forbidden");
      expect(await talk(innerPort, "GET http://x/ HTTP/1.1\r\n\r\n")).toStartWith("HTTP/1.1 405");
      expect(await talk((relay.address() as { port: number }).port, "plain")).toBe("echo:plain");
    } finally {
      for (const s of [proxy, inner, out, relay, target]) s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the options", () => {
  test("none by default; MAM_SANDBOX; net model by default with the kind's endpoint and --allow's", () => {
    const H = { HOME: "/home/u" };
    expect(askedSpec({}, "claude", H)).toBeUndefined();
    expect(askedSpec({}, "claude", { ...H, MAM_SANDBOX: "bwrap" })).toEqual({ mode: "bwrap", net: "model", allow: ["api.anthropic.com:443"] });
    expect(askedSpec({ sandbox: "bwrap", allow: ["127.0.0.1:1883"] }, "claude", { ...H, ANTHROPIC_BASE_URL: "http://127.0.0.1:4000/v1" })).toEqual({ mode: "bwrap", net: "model", allow: ["127.0.0.1:4000", "127.0.0.1:1883"] });
    expect(askedSpec({ sandbox: "bwrap", net: "none" }, "demo", H)).toEqual({ mode: "bwrap", net: "none" });
    expect(askedSpec({ sandbox: "bwrap" }, "demo", { ...H, MAM_SANDBOX_NET: "all" })).toEqual({ mode: "bwrap", net: "all" });
    expect(modelEndpoints("codex", { OPENAI_BASE_URL: "https://llm.example/v1" })).toEqual(["llm.example:443"]);
    expect(modelEndpoints("demo", {})).toEqual([]);
  });
  test("the workspace's default: after the options and MAM_SANDBOX; its net and endpoints only with its sandbox", () => {
    const H = { HOME: "/home/u" };
    const d = { sandbox: "bwrap" as const, net: "model" as const, allow: ["127.0.0.1:8080"] };
    expect(askedSpec({}, "claude", H, d)).toEqual({ mode: "bwrap", net: "model", allow: ["api.anthropic.com:443", "127.0.0.1:8080"] });
    expect(askedSpec({ allow: ["a.b:1"] }, "claude", H, d)).toEqual({ mode: "bwrap", net: "model", allow: ["api.anthropic.com:443", "127.0.0.1:8080", "a.b:1"] });
    expect(askedSpec({ sandbox: "none" }, "claude", H, d)).toBeUndefined();
    expect(askedSpec({}, "claude", { ...H, MAM_SANDBOX: "none" }, d)).toBeUndefined();
    expect(askedSpec({ sandbox: "bwrap" }, "claude", H, { sandbox: "bwrap", net: "all" })).toEqual({ mode: "bwrap", net: "model", allow: ["api.anthropic.com:443"] });
    expect(askedSpec({ net: "none" }, "demo", H, d)).toEqual({ mode: "bwrap", net: "none" });
  });
  test("a default file mam would not write is named", () => {
    expect(badDefault({ sandbox: "bwrap", net: "none" })).toBeUndefined();
    expect(badDefault([])).toBe("not a JSON object");
    expect(badDefault({ sandbox: "none" })).toBe('"sandbox" must be "bwrap"');
    expect(badDefault({ sandbox: "bwrap", bind: "/" })).toBe("unknown key 'bind'");
    expect(badDefault({ sandbox: "bwrap", net: "wide" })).toBe('"net" must be one of none, model, all');
    expect(badDefault({ sandbox: "bwrap", allow: ["x"] })).toBe('"allow" must be a list of HOST:PORT');
    expect(badDefault({ sandbox: "bwrap", net: "none", allow: ["a.b:1"] })).toBe('"allow" goes with "net": "model"');
  });
  test("mistakes are usage errors", () => {
    const H = { HOME: "/home/u" };
    expect(() => askedSpec({ net: "none" }, "claude", H)).toThrow("{{net}} goes with {{sandbox=bwrap}}");
    expect(() => askedSpec({ sandbox: "bwrap", allow: ["x"] }, "claude", H)).toThrow("'x' is not HOST:PORT");
    expect(() => askedSpec({ sandbox: "bwrap", net: "all", allow: ["a.b:1"] }, "claude", H)).toThrow("{{allow}} goes with {{net=model}}");
    expect(() => askedSpec({ sandbox: "bwrap" }, "gemini", H)).toThrow("not available for gemini agents yet");
    expect(() => askedSpec({}, "claude", { ...H, MAM_SANDBOX: "docker" })).toThrow("MAM_SANDBOX: 'docker' is not one of none, bwrap");
  });
  test("codex inside: its own command sandbox off (its seccomp refuses the supervisor's socket); the others as they are", () => {
    expect(insideArgv("codex", ["codex", "resume", "id"])).toEqual(["codex", "--sandbox", "danger-full-access", "resume", "id"]);
    expect(insideArgv("claude", ["claude", "--session-id", "x"])).toEqual(["claude", "--session-id", "x"]);
  });
  test("a row's sandbox, checked", () => {
    expect(rowSandbox({ name: "w" })).toBeUndefined();
    expect(rowSandbox({ name: "w", sandbox: { mode: "bwrap", net: "model", allow: ["a.b:443"] } })).toEqual({ mode: "bwrap", net: "model", allow: ["a.b:443"] });
    for (const bad of [{ mode: "docker", net: "none" }, { mode: "bwrap", net: "some" }, { mode: "bwrap", net: "model", allow: ["$(rm)"] }, "bwrap"]) expect(() => rowSandbox({ name: "w", sandbox: bad })).toThrow("session 'w': its sandbox in agent-sessions.yaml is malformed");
  });
});

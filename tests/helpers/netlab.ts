// A lab of Linux network namespaces that stand for machines, so that a test can run several
// "hosts" (each with its own HOME, workspace, tmux server and mam daemon, which the test sets
// up) against one real Mosquitto and cut one host off the network while it keeps running.
//
//   const SKIP = await netLabSkip({ broker: true });       // in the test file: test.skipIf(!!SKIP)
//   afterAll(cleanupNetLabs);                               // whatever a failed test left
//   …
//   const lab = await makeNetLab({ hosts: ["a", "b", "c"], broker: true, dir: sb.root });
//   if ("skip" in lab) throw new Error(lab.skip);
//   try {
//     const envB = { ...sbB.env, ...lab.broker!.env, MAM_HOST: "b" };  // MQTT_BROKER=10.x.y.1 …
//     await lab.exec("b", [...MAM_CMD, "daemon", "ensure"], { env: envB, cwd: sbB.ws });
//     await lab.exec("a", [...MAM_CMD, "job", "submit", …], { env: envA, cwd: sbA.ws });
//     await lab.cut("b");        // b keeps running, reaches nobody
//     await lab.restore("b");
//   } finally {
//     await lab.cleanup();
//   }
//
// Each host's HOME, workspace and tmux are the test's to set (a makeSandbox() per host): give
// each its own TMUX_TMPDIR, since a tmux client inside a namespace attaches to any server whose
// socket it finds, even one running outside. With `dir` inside a sandbox's root, that
// sandbox's reaper also sees the lab's Mosquitto (its argv names its config there).
//
// Topology and names. A lab has an id of 4 hex digits, claimed atomically (a file created
// exclusively in /run/mam-netlab, then `ip netns add`, which refuses a name that exists):
//   namespaces  mlab-<id>-sw      the switch: a bridge `br0`; nothing runs there
//               mlab-<id>-broker  the broker's (made with or without `broker: true`)
//               mlab-<id>-<host>  one per host
//   links       one veth pair per member, made inside the lab's namespaces: `p-<member>` in the
//               switch (a port of br0) and `eth0` in the member's namespace. No interface of a lab
//               ever exists in the root namespace, so its names cannot collide with the
//               machine's or another lab's (and all fit IFNAMSIZ: hosts are ≤ 10 characters).
//   addresses   10.<id high byte>.<id low byte>.0/24, so two labs never share a subnet:
//               the broker .1, the hosts .11, .12, … in the order given; eth0's MAC is
//               02:6d:<id>:00:<index>, and every member knows every other one as a permanent
//               neighbour (no ARP: see cut). `lo` is up in every member (tmux, mam's loopback
//               uses, a listener on 127.0.0.1 work inside). There is no default route: a member
//               reaches its own loopback and the lab's subnet, nothing else; the root
//               namespace's loopback is not reachable from inside.
//   broker      with `broker: true`, a real Mosquitto (anonymous, persistence in memory) listening
//               on 10.x.y.1:1883 inside the broker's namespace; its config and log are in lab.dir
//               (the log has connections with their source address, subscriptions as
//               "<client id> <qos> <topic>", and "Client … has exceeded timeout").
//
// Guarantees.
//   makeNetLab  resolves to a lab whose members can reach each other (links up, bridge port
//               forwarding, broker listening), or to `{ skip }` naming what refused (not Linux,
//               no `ip`, `ip netns add` refused, e.g. not root, the kernel refused a bridge or
//               a veth pair, no mosquitto); a half-made lab is removed before a skip is returned.
//   exec/spawn  run argv inside the member's namespace (`ip netns exec`: its own network stack,
//               the same files, user and pid space as the test), with exactly the env given
//               (default: this process's), and cwd. exec is bounded (timeoutMs, default 30 s:
//               then SIGKILL, code 137, timedOut) and stops reading output 2 s after the
//               command exits (a child left holding its stdout does not hang it).
//   cut         sets the member's port on the switch down (the cable pulled at the switch): its
//               eth0 keeps its address but has no carrier; its packets reach nobody and nobody's
//               reach it, in silence (no reset, no "No route to host": the neighbours are
//               static), so open TCP connections stall until keepalive ends them (the broker
//               drops a client after 1.5 × its keepalive and publishes its will) and new ones
//               time out.
//   restore     sets the port up again: packets flow at once; a stalled TCP connection resumes
//               at its next retransmission, unless keepalive ended it meanwhile. cut and restore
//               resolve once both ends show the state asked for (port DOWN / UP and forwarding,
//               eth0 without / with carrier), or throw after 5 s.
//   pids        every process now in one of the lab's namespaces (zombies excluded).
//   cleanup     SIGTERM, then SIGKILL after 3 s, every process in the lab's namespaces (daemons,
//               tmux servers, mosquitto: anything started inside, however detached), deletes the
//               links and namespaces, removes lab.dir and the claim; idempotent; throws if a
//               process outlived SIGKILL.
//
// Cleanup rules. Namespaces are not anchored in a folder, so tests/helpers/sandbox.ts's reaper
// cannot see them: a test cleans its lab in finally or afterEach, and a test file that makes
// labs calls `afterAll(cleanupNetLabs)` for what a failed test left. On process exit the labs
// still open are torn down synchronously (SIGKILL). A lab whose test process died without
// either (SIGKILL) is swept by the next makeNetLab: its claim names a process that is gone.
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { constants, tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { mosquittoPath } from "./brokers.ts";

export interface NetLabOptions {
  /** host names: [a-z][a-z0-9]{0,9}, not "sw" nor "broker" */
  hosts: string[];
  /** run a Mosquitto in the broker's namespace */
  broker?: boolean;
  /** folder for the lab's temp dir (default the system's tmpdir) */
  dir?: string;
  /** the `ip` executable (default iproute2's); the skip path is tested with a fake */
  ip?: string;
}

export interface LabBroker {
  host: string;
  port: number;
  /** MQTT_* variables that point mam at this broker */
  env: Record<string, string>;
  /** Mosquitto's log (connections, keepalive timeouts, errors) */
  log: string;
}

export interface ExecOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  stdin?: string | Uint8Array;
  /** default 30 s; then SIGKILL */
  timeoutMs?: number;
}

export interface ExecResult {
  /** exit code, or 128 + the signal's number */
  code: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

type Stdio = "pipe" | "ignore" | "inherit";

export interface SpawnOptions<In extends Stdio, Out extends Stdio, Err extends Stdio> {
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** default "ignore" */
  stdin?: In;
  /** default "pipe": read it, or pass "ignore" for a long-lived chatty process (a full pipe blocks it) */
  stdout?: Out;
  /** default "pipe" */
  stderr?: Err;
}

export interface NetLab {
  /** 4 hex digits, in every name of the lab */
  id: string;
  /** the lab's temp dir (broker config and log); removed by cleanup */
  dir: string;
  /** 10.x.y.0/24 */
  subnet: string;
  hosts: readonly string[];
  /** with `broker: true` */
  broker?: LabBroker;
  /** a member's address (a host, or "broker") */
  addr(member: string): string;
  /** a member's namespace name (for `ip netns exec` by hand) */
  netns(member: string): string;
  exec(member: string, argv: string[], o?: ExecOptions): Promise<ExecResult>;
  spawn<In extends Stdio = "ignore", Out extends Stdio = "pipe", Err extends Stdio = "pipe">(
    member: string,
    argv: string[],
    o?: SpawnOptions<In, Out, Err>,
  ): Subprocess<In, Out, Err>;
  /** take the member's link down (see the header) */
  cut(member: string): Promise<void>;
  /** bring it back up */
  restore(member: string): Promise<void>;
  /** processes now in the lab's namespaces */
  pids(): number[];
  cleanup(): Promise<void>;
}

const HOST_RE = /^[a-z][a-z0-9]{0,9}$/;
const CLAIMS = "/run/mam-netlab";
const BROKER_PORT = 1883;
const LINK_WAIT_MS = 5000;

/** labs of this process not yet cleaned up */
const open = new Set<Lab>();
let exitHook = false;

function findIp(): string | undefined {
  for (const p of ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"]) if (existsSync(p)) return p;
  return Bun.which("ip") ?? undefined;
}

interface RunResult {
  code: number;
  out: string;
  err: string;
}

async function run(argv: string[]): Promise<RunResult> {
  const p = Bun.spawn(argv, { stdin: "ignore", stdout: "pipe", stderr: "pipe", env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" } });
  const t = setTimeout(() => p.kill("SIGKILL"), 10_000);
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(t);
  return { code, out, err: err.trim() };
}

function runSync(argv: string[]): RunResult {
  const r = Bun.spawnSync(argv, { stdin: "ignore", stdout: "pipe", stderr: "pipe", env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" }, timeout: 10_000 });
  return { code: r.exitCode ?? 1, out: r.stdout.toString(), err: r.stderr.toString().trim() };
}

/** the namespace's identity (device and inode of its nsfs file) */
function nsKey(path: string): string | undefined {
  try {
    const s = statSync(path);
    return `${s.dev}:${s.ino}`;
  } catch {
    return undefined;
  }
}

/** pids of live processes in any of the named namespaces (what `ip netns pids` does) */
function pidsIn(names: string[]): number[] {
  const keys = new Set(names.map((n) => nsKey(`/run/netns/${n}`)).filter((k): k is string => !!k));
  if (!keys.size) return [];
  const hits: number[] = [];
  for (const ent of readdirSync("/proc")) {
    if (!/^\d+$/.test(ent)) continue;
    const k = nsKey(`/proc/${ent}/ns/net`); // a zombie has no namespaces left
    if (k && keys.has(k)) hits.push(Number(ent));
  }
  return hits;
}

function kill(pids: number[], sig: NodeJS.Signals): void {
  for (const p of pids) {
    try {
      process.kill(p, sig);
    } catch {}
  }
}

/** "pid starttime" of a live process: its identity across pid reuse */
function procIdentity(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return `${pid} ${stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]}`;
  } catch {
    return undefined;
  }
}

/** claim an id: a file created exclusively in CLAIMS (when it can be written), holding our identity and the lab's dir */
function claimFile(id: string): string | undefined {
  try {
    mkdirSync(CLAIMS, { recursive: true });
    const f = join(CLAIMS, id);
    const fd = openSync(f, "wx");
    writeSync(fd, `${procIdentity(process.pid)}\n`);
    closeSync(fd);
    return f;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return "taken";
    return undefined; // not writable (not root): `ip netns add` alone keeps ids apart
  }
}

function labNames(id: string, members: string[]): string[] {
  return [...members.map((m) => `mlab-${id}-${m}`), `mlab-${id}-sw`];
}

/** remove labs whose claiming process is gone (a test process killed before its cleanup) */
function sweepStale(ip: string): void {
  let ids: string[];
  try {
    ids = readdirSync(CLAIMS).filter((n) => /^[0-9a-f]{4}$/.test(n));
  } catch {
    return;
  }
  let netns: string[] = [];
  try {
    netns = readdirSync("/run/netns");
  } catch {}
  for (const id of ids) {
    const f = join(CLAIMS, id);
    let lines: string[];
    try {
      lines = readFileSync(f, "utf8").split("\n");
    } catch {
      continue;
    }
    const owner = lines[0] ?? "";
    const pid = Number(owner.split(" ")[0]);
    if (!pid || procIdentity(pid) === owner) continue;
    const names = netns.filter((n) => n.startsWith(`mlab-${id}-`));
    kill(pidsIn(names), "SIGKILL");
    for (const n of names) runSync([ip, "netns", "del", n]);
    const dir = lines[1];
    if (dir && dir.includes("mam-netlab-")) rmSync(dir, { recursive: true, force: true });
    rmSync(f, { force: true });
  }
}

class Lab implements NetLab {
  broker?: LabBroker;
  private done = false;
  readonly subnet: string;
  private readonly prefix: string;

  constructor(
    readonly id: string,
    readonly dir: string,
    readonly hosts: readonly string[],
    private readonly ip: string,
    private readonly claim: string | undefined,
  ) {
    const n = parseInt(id, 16);
    this.prefix = `10.${n >> 8}.${n & 255}`;
    this.subnet = `${this.prefix}.0/24`;
  }

  get members(): string[] {
    return ["broker", ...this.hosts];
  }

  private member(m: string): string {
    if (!this.members.includes(m)) throw new Error(`netlab ${this.id}: no member ${m} (members: ${this.members.join(", ")})`);
    return m;
  }

  addr(m: string): string {
    this.member(m);
    return m === "broker" ? `${this.prefix}.1` : `${this.prefix}.${11 + this.hosts.indexOf(m)}`;
  }

  /** the MAC address of a member's eth0: 02:6d:<id>:00:<index> (locally administered) */
  mac(m: string): string {
    const i = this.members.indexOf(this.member(m));
    return `02:6d:${this.id.slice(0, 2)}:${this.id.slice(2)}:00:${i.toString(16).padStart(2, "0")}`;
  }

  netns(m: string): string {
    return `mlab-${this.id}-${this.member(m)}`;
  }

  get sw(): string {
    return `mlab-${this.id}-sw`;
  }

  /** every namespace name of the lab, the switch last */
  get names(): string[] {
    return labNames(this.id, this.members);
  }

  spawn<In extends Stdio = "ignore", Out extends Stdio = "pipe", Err extends Stdio = "pipe">(
    m: string,
    argv: string[],
    o: SpawnOptions<In, Out, Err> = {},
  ): Subprocess<In, Out, Err> {
    if (this.done) throw new Error(`netlab ${this.id} is cleaned up`);
    return Bun.spawn([this.ip, "netns", "exec", this.netns(m), ...argv], {
      env: (o.env ?? process.env) as Record<string, string>,
      cwd: o.cwd,
      stdin: (o.stdin ?? "ignore") as In,
      stdout: (o.stdout ?? "pipe") as Out,
      stderr: (o.stderr ?? "pipe") as Err,
    });
  }

  async exec(m: string, argv: string[], o: ExecOptions = {}): Promise<ExecResult> {
    if (this.done) throw new Error(`netlab ${this.id} is cleaned up`);
    const p = Bun.spawn([this.ip, "netns", "exec", this.netns(m), ...argv], {
      env: (o.env ?? process.env) as Record<string, string>,
      cwd: o.cwd,
      stdin: o.stdin === undefined ? "ignore" : typeof o.stdin === "string" ? Buffer.from(o.stdin) : o.stdin,
      stdout: "pipe",
      stderr: "pipe",
    });
    const out = collect(p.stdout);
    const err = collect(p.stderr);
    let timedOut = false;
    const t = setTimeout(() => {
      timedOut = true;
      p.kill("SIGKILL");
    }, o.timeoutMs ?? 30_000);
    await p.exited;
    clearTimeout(t);
    await Promise.race([Promise.all([out.done, err.done]), Bun.sleep(2000)]);
    out.stop();
    err.stop();
    const sig = p.signalCode ? constants.signals[p.signalCode as NodeJS.Signals] : undefined;
    return { code: p.exitCode ?? 128 + (sig ?? 9), stdout: out.text(), stderr: err.text(), timedOut };
  }

  async cut(m: string): Promise<void> {
    await this.setLink(m, false);
  }

  async restore(m: string): Promise<void> {
    await this.setLink(m, true);
  }

  private async setLink(m: string, up: boolean): Promise<void> {
    if (this.done) throw new Error(`netlab ${this.id} is cleaned up`);
    const port = `p-${this.member(m)}`;
    const r = await run([this.ip, "-n", this.sw, "link", "set", port, up ? "up" : "down"]);
    if (r.code !== 0) throw new Error(`netlab ${this.id}: ip link set ${port} ${up ? "up" : "down"}: ${r.err}`);
    const deadline = Date.now() + LINK_WAIT_MS;
    let seen = "";
    for (;;) {
      const s = await this.linkState(m);
      seen = JSON.stringify(s);
      const ok = up ? s.port === "UP" && s.bridge === "forwarding" && s.carrier : s.port === "DOWN" && !s.carrier;
      if (ok) return;
      if (Date.now() > deadline) throw new Error(`netlab ${this.id}: ${m}'s link is not ${up ? "up" : "down"} after ${LINK_WAIT_MS} ms: ${seen}`);
      await Bun.sleep(20);
    }
  }

  /** the switch port's operstate and bridge state, and whether the member's eth0 has carrier */
  private async linkState(m: string): Promise<{ port?: string; bridge?: string; carrier: boolean }> {
    const [p, e] = await Promise.all([
      run([this.ip, "-n", this.sw, "-j", "-d", "link", "show", "dev", `p-${m}`]),
      run([this.ip, "-n", this.netns(m), "-j", "link", "show", "dev", "eth0"]),
    ]);
    const pj = (p.code === 0 ? JSON.parse(p.out)[0] : {}) as { operstate?: string; linkinfo?: { info_slave_data?: { state?: string } } };
    const ej = (e.code === 0 ? JSON.parse(e.out)[0] : {}) as { flags?: string[]; operstate?: string };
    return {
      port: pj.operstate,
      bridge: pj.linkinfo?.info_slave_data?.state,
      carrier: !!ej.flags?.includes("LOWER_UP") && !ej.flags.includes("NO-CARRIER"),
    };
  }

  pids(): number[] {
    return pidsIn(this.names);
  }

  async cleanup(): Promise<void> {
    if (this.done) return;
    this.done = true;
    open.delete(this);
    const names = this.names;
    kill(pidsIn(names), "SIGTERM");
    let deadline = Date.now() + 3000;
    while (Date.now() < deadline && pidsIn(names).length) await Bun.sleep(50);
    kill(pidsIn(names), "SIGKILL");
    deadline = Date.now() + 2000;
    while (Date.now() < deadline && pidsIn(names).length) await Bun.sleep(20);
    const left = pidsIn(names);
    for (const m of this.members) await run([this.ip, "-n", this.sw, "link", "del", `p-${m}`]);
    for (const n of names) await run([this.ip, "netns", "del", n]);
    rmSync(this.dir, { recursive: true, force: true });
    if (this.claim) rmSync(this.claim, { force: true });
    if (left.length) throw new Error(`netlab ${this.id}: processes outlived SIGKILL: ${left.join(", ")}`);
  }

  /** at process exit: no waiting, SIGKILL and delete */
  cleanupSync(): void {
    if (this.done) return;
    this.done = true;
    open.delete(this);
    kill(pidsIn(this.names), "SIGKILL");
    for (const n of this.names) runSync([this.ip, "netns", "del", n]);
    rmSync(this.dir, { recursive: true, force: true });
    if (this.claim) rmSync(this.claim, { force: true });
  }
}

function collect(s: ReadableStream<Uint8Array>) {
  const chunks: Uint8Array[] = [];
  const reader = s.getReader();
  const done = (async () => {
    try {
      for (;;) {
        const r = await reader.read();
        if (r.done) return;
        chunks.push(r.value);
      }
    } catch {}
  })();
  return {
    done,
    text: () => Buffer.concat(chunks).toString(),
    stop: () => void reader.cancel().catch(() => {}),
  };
}

/** is a TCP socket listening on port in the network namespace of pid? (its /proc/<pid>/net/tcp) */
function listeningIn(pid: number, port: number): boolean {
  try {
    const hex = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
    return readFileSync(`/proc/${pid}/net/tcp`, "utf8")
      .split("\n")
      .some((l) => {
        const f = l.trim().split(/\s+/);
        return f[1]?.endsWith(hex) && f[3] === "0A";
      });
  } catch {
    return false;
  }
}

/** make a lab (see the header), or say why it cannot be made here */
export async function makeNetLab(o: NetLabOptions): Promise<NetLab | { skip: string }> {
  const hosts = [...o.hosts];
  for (const h of hosts) {
    if (!HOST_RE.test(h) || h === "sw" || h === "broker") throw new Error(`netlab: bad host name ${JSON.stringify(h)} ([a-z][a-z0-9]{0,9}, not sw or broker)`);
  }
  if (new Set(hosts).size !== hosts.length) throw new Error(`netlab: host names repeat: ${hosts.join(", ")}`);
  if (hosts.length > 200) throw new Error("netlab: at most 200 hosts");
  if (process.platform !== "linux") return { skip: `netlab: network namespaces need Linux (this is ${process.platform})` };
  const ip = o.ip ?? findIp();
  if (!ip) return { skip: "netlab: iproute2's `ip` is not installed (apt-get install iproute2)" };
  const mosquitto = o.broker ? mosquittoPath() : undefined;
  if (o.broker && !mosquitto) return { skip: "netlab: mosquitto is not installed (apt-get install mosquitto)" };
  const uid = process.getuid?.() ?? -1;
  const notRoot = uid === 0 ? "" : ` (running as uid ${uid}, not root)`;

  sweepStale(ip);
  // claim an id: the claim file, then the switch's namespace; `ip netns add` refuses an existing name
  let id = "";
  let claim: string | undefined;
  for (let i = 0; i < 64 && !id; i++) {
    const cand = Math.floor(Math.random() * 0x10000)
      .toString(16)
      .padStart(4, "0");
    claim = claimFile(cand);
    if (claim === "taken") continue;
    const r = await run([ip, "netns", "add", `mlab-${cand}-sw`]);
    if (r.code === 0) {
      id = cand;
      break;
    }
    if (claim) rmSync(claim, { force: true });
    if (/exists/i.test(r.err)) continue;
    return { skip: `netlab: cannot make network namespaces: \`ip netns add mlab-${cand}-sw\` failed (exit ${r.code}): ${r.err || "no message"}${notRoot}` };
  }
  if (!id) return { skip: "netlab: no free lab id after 64 tries" };

  const dir = mkdtempSync(join(o.dir ?? tmpdir(), `mam-netlab-${id}-`));
  if (claim) writeFileSync(claim, `${procIdentity(process.pid)}\n${dir}\n`);
  const lab = new Lab(id, dir, hosts, ip, claim);
  open.add(lab);
  if (!exitHook) {
    exitHook = true;
    process.on("exit", () => {
      for (const l of [...open]) l.cleanupSync();
    });
  }

  // the rest is the kernel's to refuse: a bridge, veth pairs, addresses
  const sw = lab.sw;
  const steps: string[][] = [
    ["-n", sw, "link", "set", "lo", "up"],
    ["-n", sw, "link", "add", "br0", "type", "bridge"],
    ["-n", sw, "link", "set", "br0", "up"],
  ];
  const memberSteps: string[][] = [];
  for (const m of lab.members) {
    const ns = lab.netns(m);
    steps.push(["netns", "add", ns]);
    // every other member as a permanent neighbour: no ARP, so a cut is silence (never "No route
    // to host" from a resolution that failed during the cut) and a restored link carries at once
    const neigh = join(dir, `neigh-${m}.batch`);
    const others = lab.members.filter((x) => x !== m);
    writeFileSync(neigh, others.map((x) => `neigh replace ${lab.addr(x)} lladdr ${lab.mac(x)} dev eth0 nud permanent\n`).join(""));
    memberSteps.push(
      ["-n", sw, "link", "add", `p-${m}`, "type", "veth", "peer", "name", "eth0", "address", lab.mac(m), "netns", ns],
      ["-n", sw, "link", "set", `p-${m}`, "master", "br0"],
      ["-n", sw, "link", "set", `p-${m}`, "up"],
      ["-n", ns, "link", "set", "lo", "up"],
      ["-n", ns, "addr", "add", `${lab.addr(m)}/24`, "dev", "eth0"],
      ["-n", ns, "link", "set", "eth0", "up"],
      ["-n", ns, "-batch", neigh],
    );
  }
  for (const s of [...steps, ...memberSteps]) {
    const r = await run([ip, ...s]);
    if (r.code !== 0) {
      await lab.cleanup();
      return { skip: `netlab: the kernel refused \`ip ${s.join(" ")}\` (exit ${r.code}): ${r.err || "no message"}${notRoot}` };
    }
  }
  try {
    for (const m of lab.members) await lab.restore(m); // waits until every port forwards and every eth0 has carrier
    if (o.broker) lab.broker = await startLabBroker(lab, mosquitto!);
  } catch (e) {
    await lab.cleanup();
    throw e;
  }
  return lab;
}

async function startLabBroker(lab: Lab, bin: string): Promise<LabBroker> {
  const host = lab.addr("broker");
  const conf = join(lab.dir, "mosquitto.conf");
  const log = join(lab.dir, "mosquitto.log");
  const lines = [
    `listener ${BROKER_PORT} ${host}`,
    "allow_anonymous true",
    "persistence false",
    `log_dest file ${log}`,
    "log_type error",
    "log_type warning",
    "log_type notice",
    "log_type subscribe",
    "log_timestamp_format %Y-%m-%dT%H:%M:%S",
  ];
  // started as root, mosquitto drops to the `mosquitto` user, who cannot read files in a 0700 temp dir
  if (process.getuid?.() === 0) lines.push("user root");
  writeFileSync(conf, `${lines.join("\n")}\n`);
  const p = lab.spawn("broker", [bin, "-c", conf], { env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" }, cwd: lab.dir, stdout: "ignore", stderr: "ignore" });
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && p.exitCode === null && !listeningIn(p.pid, BROKER_PORT)) await Bun.sleep(25);
  if (!listeningIn(p.pid, BROKER_PORT)) {
    p.kill("SIGKILL");
    throw new Error(`netlab ${lab.id}: mosquitto did not listen on ${host}:${BROKER_PORT}: ${existsSync(log) ? readFileSync(log, "utf8") : ""}`);
  }
  return { host, port: BROKER_PORT, env: { MQTT_BROKER: host, MQTT_PORT: String(BROKER_PORT), MQTT_TLS: "0" }, log };
}

/** why a lab cannot be made here (a one-host lab is made and removed), or undefined when it can: for test.skipIf */
export async function netLabSkip(o: { broker?: boolean } = {}): Promise<string | undefined> {
  const lab = await makeNetLab({ hosts: ["probe"], broker: o.broker });
  if ("skip" in lab) return lab.skip;
  await lab.cleanup();
  return undefined;
}

/** clean every lab of this process not cleaned yet (afterAll / afterEach of a test file) */
export async function cleanupNetLabs(): Promise<void> {
  const errors: string[] = [];
  for (const l of [...open]) {
    try {
      await l.cleanup();
    } catch (e) {
      errors.push(String(e));
    }
  }
  if (errors.length) throw new Error(errors.join("\n"));
}

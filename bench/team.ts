// bench area `team` (issue 24, docs/machines.md): a team across machines under load. Three hosts
// (BENCH_TEAM_HOSTS, default 3: hostA, hostB, hostC, …) on this machine as tests/helpers/team.ts
// makes them (each its own MAM_HOST, HOME, workspace, tmux server and daemon; one real Mosquitto),
// 10 demo agents each (`--think-ms 20`: they report at once, so what is measured is mam, not
// them). From host A one process submits 300 jobs (BENCH_TEAM_JOBS) the way a user's script does:
// `mam job submit` whole processes, one after another, no `--from` (a script is no session); per
// round the other hosts' agents get two jobs each, A's own one (3 hosts: 120 go to B's agents, 120
// to C's, 60 to A's own), in an order that gives each agent its next job ≥ 20 submits later. The
// daemons run with the default RECONCILE_POLL_INTERVAL (15 s). With more than 3 hosts the rows give
// A apart and min / median / max over the others (every host's numbers go to stderr).
//
// How it is measured:
//   * submit time: the bench's clock just before it spawns the job's `mam job submit`;
//   * arrival: the bench watches A's .mam/jobs (inotify) and reads each journal's new bytes as it
//     grows, stamping each line with its clock when read (journal timestamps are whole seconds).
//     Sweeps back the watch up: every 20 ms the journals of jobs not completed yet, every 250 ms
//     the whole folder; the row says how many lines only a sweep saw;
//   * lost: a job with no `completed` in A's journal BENCH_TEAM_DEADLINE_S (default 60) after
//     the last submit; doubled: an event identity (origin#seq) twice in any journal on A, B or
//     C, a stage (received, delivered, completed) twice in A's journal, or a job header twice in
//     a pane's whole history (tmux capture-pane -J -S -);
//   * daemons: CPU (/proc/<pid>/stat: its own ticks, and apart those of the children it waited
//     for, its tmux calls; as % of one core and as seconds) and RSS (VmRSS, sampled every 500 ms)
//     of each host's daemon from the first submit to the last `completed`; RSS at the first
//     submit (agents announced, no job yet); then, once 5 s passed, idle over
//     BENCH_TEAM_IDLE_SECONDS (default 30). The 1-minute load average of the machine is shown at
//     the start and the end of the run: this bench is sensitive to whatever else runs;
//   * received: each daemon is stopped (`mam daemon stop`) after the idle and says in its
//     monitor.log what the broker handed it over its life (job events / other messages); beside
//     it, a subscriber of the bench's own to `#` (QoS 1, from before the team is formed to after
//     the daemons stopped) counts what the broker carried, by kind of topic: presence, online
//     state, delivery, job event, ack, a reader's end-of-retained marker (sync), other.
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { mosquittoPath, startMosquitto, type TestBroker } from "../tests/helpers/brokers.ts";
import { makeSandbox, type Sandbox } from "../tests/helpers/sandbox.ts";
import { doubled, formTeam, type Host, makeHost, untilAnnounced } from "../tests/helpers/team.ts";
import { TMUX_BIN } from "../tests/helpers/tmux.ts";
import { cpuPercent, load1, pct, pp, procUsage, type Row, secondsFrom, type Usage } from "./common.ts";
import { JournalWatch } from "./journal-watch.ts";

const AGENTS = 10;
/** BENCH_TEAM_JOBS: fewer (or more) jobs for a quick look; the rows say how many */
const JOBS = Math.round(secondsFrom("BENCH_TEAM_JOBS", 300));
/** BENCH_TEAM_HOSTS: how many hosts (2 to 26: hostA, hostB, …); A submits every job */
const HOSTS = Math.min(26, Math.max(2, Math.round(secondsFrom("BENCH_TEAM_HOSTS", 3))));
const THINK_MS = 20;
const NAMES = Array.from({ length: HOSTS }, (_, i) => `host${String.fromCharCode(65 + i)}`);
const letter = (name: string) => name.slice(4);
/** the hosts other than A, as the rows name them: "B and C", or "B…J" */
const OTHERS = HOSTS <= 3 ? NAMES.slice(1).map(letter).join(" and ") : `B…${letter(NAMES[HOSTS - 1]!)}`;
const ONE_OF_OTHERS = HOSTS <= 3 ? NAMES.slice(1).map(letter).join(" or ") : `one of ${OTHERS}`;

/** the order of the jobs' targets: per round, each other host's agents twice, A's once (3 hosts: rounds of 50) */
function targets(): { host: string; agent: string }[] {
  const [own, ...remote] = NAMES;
  const round: { host: string; agent: string }[] = [];
  for (let k = 0; k < AGENTS; k++) round.push(...remote.map((host) => ({ host, agent: `w${k}` })), { host: own!, agent: `w${k}` });
  for (let k = 0; k < AGENTS; k++) round.push(...remote.map((host) => ({ host, agent: `w${k}` })));
  return Array.from({ length: JOBS }, (_, i) => round[i % round.length]!);
}

/** job headers typed more than once into the panes of a host (their whole history, wrapped lines joined) */
function headersTwice(h: Host): string[] {
  const out: string[] = [];
  for (let k = 0; k < AGENTS; k++) {
    const r = Bun.spawnSync(["tmux", "-L", h.tmux, "capture-pane", "-p", "-J", "-S", "-", "-t", `w${k}`], { env: h.env });
    const counts = new Map<string, number>();
    for (const m of r.stdout.toString().matchAll(/\[mam\] Job ([0-9a-f]{8}) delegated to you/g)) counts.set(m[1]!, (counts.get(m[1]!) ?? 0) + 1);
    for (const [id, n] of counts) if (n > 1) out.push(`${id} ×${n} in ${h.name} w${k}`);
  }
  return out;
}

async function daemonPid(h: Host): Promise<number> {
  const st = JSON.parse(await h.ok(["daemon", "status", "--json"])) as { pid: number | null; mode: string };
  if (!st.pid || st.mode !== "mqtt") throw new Error(`${h.name}: the daemon is not up in mqtt mode (${JSON.stringify(st)}):\n${h.log().slice(-2000)}`);
  return st.pid;
}

const mib = (kib: number) => `${(kib / 1024).toFixed(1)} MiB`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
/** "min / median / max" of xs, each shown by f */
const spread = (xs: number[], f: (x: number) => string) => `${f(Math.min(...xs))} / ${f(median(xs))} / ${f(Math.max(...xs))}`;

/** what the broker carries, counted by a subscriber to `#`: each topic kind, and presence / online per host */
interface Tap {
  kinds: Map<string, number>;
  byHost: Map<string, number>;
  close(): Promise<void>;
}

async function tapBroker(port: number): Promise<Tap> {
  const { default: mqtt } = await import("mqtt");
  const client = await mqtt.connectAsync({ host: "127.0.0.1", port, clientId: `bench-team-tap-${process.pid}`, reconnectPeriod: 1000, protocolVersion: 4 } as never);
  const kinds = new Map<string, number>();
  const byHost = new Map<string, number>();
  const add = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  client.on("message", (topic: string) => {
    const m = /\/(presence|online|deliver)\/([^/]+)\//.exec(topic);
    if (m) {
      add(kinds, m[1]!);
      if (m[1] !== "deliver") add(byHost, `${m[1]} ${m[2]}`);
    } else if (topic.endsWith("/events")) add(kinds, "events");
    else if (topic.endsWith("/acks")) add(kinds, "acks");
    else if (/\/sync\//.test(topic)) add(kinds, "sync");
    else {
      add(kinds, "other");
      const w = topic.split("/");
      add(byHost, `other ${w.slice(0, 4).join("/")}${w.length > 5 ? "/…" : ""}${w.length > 4 ? `/${w.at(-1)}` : ""}`);
    }
  });
  await client.subscribeAsync("#", { qos: 1 });
  return { kinds, byHost, close: () => client.endAsync().then(() => undefined) };
}

/** what the daemon said as it stopped: what the broker handed it (the last such line; the log may have rotated once) */
function receivedFromLog(h: Host): { events: number; other: number } | undefined {
  const read = (f: string) => {
    try {
      return readFileSync(join(h.ws, ".mam", f), "utf8");
    } catch {
      return "";
    }
  };
  const all = [...`${read("monitor.log.1")}\n${read("monitor.log")}`.matchAll(/MQTT Monitor: received (\d+) job event\(s\) and (\d+) other message\(s\) from the broker/g)];
  const m = all.at(-1);
  return m ? { events: Number(m[1]), other: Number(m[2]) } : undefined;
}

export async function benchTeam(bin: string): Promise<Row[]> {
  const plan = targets();
  const on = (h: string) => plan.filter((t) => t.host === h).length;
  const onOthers = NAMES.slice(1).map(on);
  const where =
    HOSTS <= 3
      ? `${NAMES.slice(1).map((n) => `${on(n)} → ${letter(n)}`).join(", ")}, ${on("hostA")} → A's own`
      : `${Math.min(...onOthers) === Math.max(...onOthers) ? onOthers[0] : `${Math.min(...onOthers)}-${Math.max(...onOthers)}`} → each of ${OTHERS} (${onOthers.reduce((a, b) => a + b, 0)} in all), ${on("hostA")} → A's own`;
  const what = `team across machines: ${HOSTS} hosts × ${AGENTS} demo agents (--think-ms ${THINK_MS}) on one machine, one Mosquitto, ${JOBS} jobs from A (${where}) by \`mam job submit\` whole processes one after another`;
  if (!mosquittoPath() || !TMUX_BIN) return [{ what, target: "-", measured: "skipped: mosquitto or tmux not installed", ok: null }];
  const deadlineS = secondsFrom("BENCH_TEAM_DEADLINE_S", 60);
  const idleS = secondsFrom("BENCH_TEAM_IDLE_SECONDS", 30);
  let sb: Sandbox | undefined;
  let broker: TestBroker | undefined;
  let tap: Tap | undefined;
  const hosts: Host[] = [];
  try {
    sb = makeSandbox("mam-bench-team-");
    broker = await startMosquitto(join(sb.root, "broker"));
    tap = await tapBroker(broker.port);
    // the binary under measurement, the default poll interval (the helper's 1 s is for tests)
    for (const n of NAMES) hosts.push(makeHost(sb.root, n, broker.env, { RECONCILE_POLL_INTERVAL: "15" }, [bin]));
    const [A] = hosts as [Host];
    await formTeam(hosts);
    await Promise.all(
      hosts.map(async (h) => {
        for (let k = 0; k < AGENTS; k++) await h.demo(`w${k}`, "worker", ["--think-ms", String(THINK_MS)]);
      }),
    );
    await untilAnnounced(A, hosts.flatMap((h) => Array.from({ length: AGENTS }, (_, k) => `w${k}@${h.name}`)), 60_000 + 10_000 * HOSTS);
    const pids = await Promise.all(hosts.map(daemonPid));

    // ---- the run -------------------------------------------------------------------------
    // (the folder as mam makes it, before the first job, so that the watch sees every line)
    mkdirSync(join(A.ws, ".mam", "jobs"), { recursive: true, mode: 0o700 });
    const jw = new JournalWatch(join(A.ws, ".mam", "jobs"));
    const loadStart = load1();
    const before: Usage[] = pids.map(procUsage);
    const peak = pids.map(() => 0);
    const sampler = setInterval(() => pids.forEach((p, i) => (peak[i] = Math.max(peak[i]!, procUsage(p).rssKiB))), 500);
    const jobs: { id: string; host: string; t0: number; t1: number }[] = [];
    const runStart = performance.now();
    for (const t of plan) {
      const to = t.host === "hostA" ? t.agent : `${t.agent}@${t.host}`;
      const t0 = performance.now();
      const r = await A.mam(["job", "submit", "--to", to, "--prompt", `bench job for ${to}`]);
      const t1 = performance.now();
      if (r.code !== 0 || !/^[0-9a-f]{8}$/.test(r.stdout.trim())) throw new Error(`mam job submit --to ${to} → ${r.code}: ${r.stdout}${r.stderr}\n${A.log().slice(-2000)}`);
      jobs.push({ id: r.stdout.trim(), host: t.host, t0, t1 });
    }
    const submitS = (performance.now() - runStart) / 1000;
    const deadline = performance.now() + deadlineS * 1000;
    while (performance.now() < deadline && jobs.some((j) => jw.at(j.id, "completed") === undefined)) await Bun.sleep(100);
    const runS = (performance.now() - runStart) / 1000;
    clearInterval(sampler);
    const after: Usage[] = pids.map(procUsage);
    const loadEnd = load1();
    jw.close();

    // ---- what arrived ----------------------------------------------------------------------
    const remote = jobs.filter((j) => j.host !== "hostA");
    /** per job, the time from `a` to `b` (either a stage seen in A's journal, or submit = t0) */
    const span = (js: typeof jobs, a: string, b: string) =>
      js.flatMap((j) => {
        const ta = a === "submit" ? j.t0 : jw.at(j.id, a);
        const tb = jw.at(j.id, b);
        return ta === undefined || tb === undefined ? [] : [tb - ta];
      });
    const delivered = span(remote, "submit", "delivered");
    const completed = span(jobs, "submit", "completed");
    const lost = jobs.filter((j) => jw.at(j.id, "completed") === undefined).map((j) => `${j.id} (${j.host})`);
    const twice: string[] = [];
    for (const j of jobs) {
      for (const h of hosts) twice.push(...doubled(h.journal(j.id)).map((k) => `${j.id} ${k} in ${h.name}'s journal`));
      for (const e of ["received", "delivered", "completed"]) if (jw.count(j.id, e) > 1) twice.push(`${j.id}: ${e} ×${jw.count(j.id, e)} in hostA's journal`);
    }
    for (const h of hosts) twice.push(...headersTwice(h));
    if (lost.length || twice.length) console.error(`bench team: lost ${lost.slice(0, 10).join(", ")}; doubled ${twice.slice(0, 10).join(", ")}`);

    // ---- idle --------------------------------------------------------------------------------
    await Bun.sleep(5000);
    const idleA: Usage[] = pids.map(procUsage);
    await Bun.sleep(idleS * 1000);
    const idleB: Usage[] = pids.map(procUsage);
    // the same daemons all along (a restart would hide a crash)
    const now = await Promise.all(hosts.map(daemonPid));
    const restarted = hosts.filter((_, i) => now[i] !== pids[i]).map((h) => h.name);

    // what each daemon received from the broker over its whole life (it says so as it stops)
    const received = await Promise.all(
      hosts.map(async (h) => {
        await h.mam(["daemon", "stop"]);
        let r = receivedFromLog(h);
        for (let i = 0; !r && i < 50; i++) {
          await Bun.sleep(100);
          r = receivedFromLog(h);
        }
        return r;
      }),
    );
    await Bun.sleep(1000);
    await tap.close();
    const carried = (k: string) => tap!.kinds.get(k) ?? 0;
    const tapOf = (kind: string, i: number) => tap!.byHost.get(`${kind} ${hosts[i]!.name}`) ?? 0;
    console.error(`bench team: the broker carried ${[...tap.kinds].map(([k, n]) => `${k} ${n}`).join(", ")}; ${[...tap.byHost].map(([k, n]) => `${k} ${n}`).join(", ")}`);
    const ticksPerS = Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100;
    const run = pids.map((_, i) => ({
      cpu: cpuPercent(before[i]!, after[i]!, runS),
      kids: cpuPercent(before[i]!, after[i]!, runS, true),
      s: (after[i]!.ticks - before[i]!.ticks) / ticksPerS,
      kidsS: (after[i]!.childTicks - before[i]!.childTicks) / ticksPerS,
      peak: peak[i]!,
    }));
    const idle = pids.map((_, i) => ({ rss: idleB[i]!.rssKiB, anon: idleB[i]!.anonKiB, cpu: cpuPercent(idleA[i]!, idleB[i]!, idleS), kids: cpuPercent(idleA[i]!, idleB[i]!, idleS, true) }));
    const held = (i: number) => (i === 0 ? JOBS : on(hosts[i]!.name));
    const runText = (i: number) => `${run[i]!.cpu.toFixed(1)} % (+${run[i]!.kids.toFixed(1)} %) = ${run[i]!.s.toFixed(1)} s (+${run[i]!.kidsS.toFixed(1)} s) / ${mib(run[i]!.peak)}`;
    const idleText = (i: number) => `${mib(idle[i]!.rss)} (${mib(idle[i]!.anon)}) / ${idle[i]!.cpu.toFixed(2)} % (+${idle[i]!.kids.toFixed(2)} %)`;
    const firstText = (i: number) => `${mib(before[i]!.rssKiB)} (${mib(before[i]!.anonKiB)})`;
    const receivedText = (i: number) => {
      const r = received[i];
      return r ? `${r.events} / ${r.other} (${held(i)} jobs)` : "no count in its log";
    };
    for (const [i, h] of hosts.entries()) console.error(`bench team: ${h.name}: run ${runText(i)}; at the first submit ${firstText(i)}; idle ${idleText(i)}; received ${receivedText(i)}`);
    /** each host's text (3 hosts or fewer), else A's and min / median / max over the others of each of `parts` */
    const others = hosts.slice(1).map((_, i) => i + 1);
    const per = (f: (i: number) => string, parts: [string, (i: number) => number, (x: number) => string][]) =>
      HOSTS <= 3 ? hosts.map((h, i) => `${letter(h.name)} ${f(i)}`).join("; ") : `A ${f(0)}; ${OTHERS} (min / median / max): ${parts.map(([name, get, show]) => `${name} ${spread(others.map(get), show)}`).join("; ")}`;
    const pctText = (x: number) => `${x.toFixed(1)} %`;
    const mibText = (x: number) => mib(x);
    const sText = (x: number) => `${x.toFixed(1)} s`;
    const local = jobs.filter((j) => j.host === "hostA");
    const rcv = (i: number) => received[i] ?? { events: NaN, other: NaN };
    return [
      {
        what: `${what}: jobs/s submitted (submit process median / p99)`,
        target: "-",
        measured: `${(JOBS / submitS).toFixed(1)} jobs/s (${submitS.toFixed(1)} s); ${pp(jobs.map((j) => j.t1 - j.t0))}; load average ${loadStart} → ${loadEnd}`,
        ok: null,
      },
      {
        what: `same: submit → \`delivered\` in A's journal, the ${remote.length} jobs on ${OTHERS} (p50 / p99)`,
        target: "≤ 1 s p99",
        measured: pp(delivered),
        ok: delivered.length === remote.length && pct(delivered, 99) <= 1000,
      },
      {
        what: `same, its stages in A's journal (p50 / p99): submit → \`offered\`; \`offered\` → \`received\` (${ONE_OF_OTHERS} took it); \`received\` → \`delivered\` (typed, Enter 300 ms after the text)`,
        target: "-",
        measured: `${pp(span(remote, "submit", "offered"))}; ${pp(span(remote, "offered", "received"))}; ${pp(span(remote, "received", "delivered"))}`,
        ok: null,
      },
      {
        what: `same: submit → \`completed\` in A's journal (p50 / p99): the ${remote.length} jobs on ${OTHERS}; the ${local.length} on A's own agents`,
        target: "-",
        measured: `${pp(span(remote, "submit", "completed"))}; ${pp(span(local, "submit", "completed"))}`,
        ok: null,
      },
      {
        what: `same: lost (no \`completed\` ${deadlineS} s after the last submit) / doubled (an origin#seq twice in a journal of ${HOSTS <= 3 ? `A, ${ONE_OF_OTHERS}` : `any host`}, a stage twice in A's, or a job header twice in a pane)`,
        target: "0 lost, 0 doubled",
        measured: `${lost.length} lost, ${twice.length} doubled (of ${completed.length + lost.length} jobs; ${jw.byWatch + jw.bySweep} journal lines read, ${jw.bySweep} by a sweep)`,
        ok: lost.length === 0 && twice.length === 0,
      },
      {
        what: `same: each host's daemon during the run (first submit to last \`completed\`): CPU (% of one core; its tmux calls apart) / peak RSS`,
        target: "-",
        measured: `${runS.toFixed(1)} s: ${per(runText, [["CPU", (i) => run[i]!.cpu, pctText], ["CPU time", (i) => run[i]!.s, sText], ["tmux calls", (i) => run[i]!.kidsS, sText], ["peak RSS", (i) => run[i]!.peak, mibText]])}`,
        ok: null,
      },
      {
        what: `same: each host's daemon at the first submit (its ${AGENTS} agents announced, no job yet), RSS (its anonymous part)`,
        target: "-",
        measured: per(firstText, [["RSS", (i) => before[i]!.rssKiB, mibText], ["anonymous", (i) => before[i]!.anonKiB, mibText]]),
        ok: null,
      },
      {
        what: `same: each host's daemon idle after the run (A keeps its ${JOBS} ended jobs, ${OTHERS} their copies), RSS (its anonymous part) / CPU (its tmux calls apart) over ${idleS} s${restarted.length ? ` (RESTARTED: ${restarted.join(", ")})` : ""}`,
        target: "≤ 60 MiB RSS, ≤ 1 % of one core",
        measured: per(idleText, [["RSS", (i) => idle[i]!.rss, mibText], ["anonymous", (i) => idle[i]!.anon, mibText], ["CPU", (i) => idle[i]!.cpu, (x) => `${x.toFixed(2)} %`]]),
        ok: restarted.length === 0 && idle.every((x) => x.rss <= 60 * 1024 && x.cpu <= 1),
      },
      {
        what: `same: what each host's daemon received from the broker from its start to its stop after the idle (job events / other messages: deliveries, online states), beside the jobs it held (A: all ${JOBS}; ${OTHERS}: their copies)`,
        target: "-",
        measured: per(receivedText, [["job events", (i) => rcv(i).events, String], ["other", (i) => rcv(i).other, String], ["jobs held", held, String], ["job events per job held", (i) => rcv(i).events / held(i), (x) => x.toFixed(2)]]),
        ok: null,
      },
      {
        what: "same: what the broker carried over the bench (a subscriber of the bench's own to `#`, QoS 1, from before the team formed to after the daemons stopped): job events; deliveries; presence and online-state messages (each host's); acks (A's, retained, on each job's topic); the markers that end a reader's retained messages (`mam job submit`, `mam status --fleet`)",
        target: "-",
        measured: `${carried("events")} job events; ${carried("deliver")} deliveries; ${carried("presence")} presence, ${carried("online")} online (${per((i) => `${tapOf("presence", i)} + ${tapOf("online", i)}`, [["presence", (i) => tapOf("presence", i), String], ["online", (i) => tapOf("online", i), String]])}); ${carried("acks")} acks; ${carried("sync")} markers${carried("other") ? `; ${carried("other")} other` : ""}`,
        ok: null,
      },
    ];
  } finally {
    for (const h of hosts) await h.stop().catch((e) => console.error(`bench team: stopping ${h.name}: ${(e as Error).message}`));
    await tap?.close().catch(() => undefined);
    await broker?.stop().catch(() => undefined);
    await sb?.cleanup().catch((e) => console.error(`bench team: ${(e as Error).message}`));
  }
}

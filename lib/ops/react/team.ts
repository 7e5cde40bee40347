// The daemon's part in a team across machines (docs/machines.md), when this machine is in one:
//   * its broker connection also subscribes to this workspace's delivery topic, and carries a
//     last will that marks the workspace offline (retained);
//   * on every connection it says it is online and announces its presence (retained): the host,
//     the workspace and its running agents with their LIVE state and job; again whenever the
//     registry or a job changes (at most once a second), with every poll, and at least every
//     HEARTBEAT_MS (so that "last seen" means something);
//   * a delivery on its topic is taken by lib/ops/job/receive.ts; what that journals is published
//     to the delegator on this connection. The typing runs beside the daemon's hooks (one
//     delivery at a time per agent), so that the messages behind it do not wait out its pauses;
//   * the events of this host's journals of copies of other hosts' jobs that the delegator has not
//     acknowledged (its signed, retained acks) are sent again on every connection and, with a
//     backoff, on polls, until the delegator holds them all, the copy's end included
//     (lib/ops/react/forward.ts): an agent's report made while this host was cut off still arrives.
//     They go on the fresh connection that read the acks, not on the daemon's own: that one may
//     stay stalled after a cut until TCP retransmits or the keepalive gives up on it;
//   * the copies of other hosts' jobs it holds: their events (the delegator's cancel, a reviewer's
//     verdict) are on their delegator's job topics, which it subscribes to as it takes a delivery
//     and again on each connection while the copy is unfinished, and drops once it has ended;
//   * the deliveries it offered that are not received yet are published again (the same sealed
//     message) on each new connection and every minute: a broker may lose a retained message
//     (lib/team/kept-offers.ts);
//   * it hears every workspace's online state as it is published, and its presence too when the
//     broker does not hand a reader its own retained presence back (probed on each connection),
//     and keeps the newest of each for readers of the roster (lib/team/heard.ts): a broker that
//     keeps retained messages per node, or serves none to a wildcard (RabbitMQ), gives them nothing;
//   * on the way out it says it is offline.
import { statSync } from "node:fs";
import { brokerConfigFromEnv, eventsTopic } from "../../jobs/broker-config.ts";
import { isFinal } from "../../jobs/statuses.ts";
import type { Deps } from "../deps.ts";
import type { Team } from "../../team/config.ts";
import { hostName } from "../../team/host.ts";
import { deliveriesOf, deliveryTopic, type Online, onlineOrder, onlineTopic, type Presence, presenceTopic, sameTopic, syncTopic, TEAM_PROTOCOL, teamPrefix, underTopic, workspaceId } from "../../team/messages.ts";
import { seal } from "../../team/seal.ts";
import type { Appended, JobRecord } from "../../jobs/store.ts";
import type { Outgoing } from "../../jobs/transport.ts";
import type { Dispatched } from "../job/queue.ts";
import type { HookContext, LinkExtras } from "./context.ts";
import { Forwarder } from "./forward.ts";
import { HeardRoster } from "../../team/heard.ts";

export const HEARTBEAT_MS = 60_000;
/** how long after a workspace comes online this one says its presence again (one for a burst) */
const ANNOUNCE_MS = 500;
/** how long after its end a job's end is published again on a new connection */
const RESEND_ENDS_MS = 86_400_000;

export interface TeamPart {
  host: string;
  /** the team's topic prefix */
  tp: string;
  extras(): LinkExtras;
  owns(topic: string): boolean;
  onMessage(topic: string, payload: Buffer, ctx: HookContext): Promise<void>;
  /** a daemon that starts: deliveries an earlier one took and never confirmed become uncertain */
  recover(ctx: HookContext): Promise<void>;
  /** a copy of another host's job that waited its turn here and got it: type it as its delivery */
  typeQueued(d: Dispatched, ctx: HookContext): Promise<void>;
  /** a new connection: online, presence, and what the delegators miss */
  connected(ctx: HookContext): Promise<void>;
  /**
   * the presence: `check` when the registry or a job changed or the heartbeat is due (one stat
   * otherwise), `refresh` look again at the agents and publish what changed, `force` publish
   */
  tick(ctx: HookContext, how: "check" | "refresh" | "force"): Promise<void>;
  /** a job changed here: the presence's job column */
  jobsChanged(): void;
  /** send again the events of copies their delegators miss */
  forward(ctx: HookContext): Promise<void>;
  /** the offline message to publish on the way out */
  farewell(): { topic: string; payload: string };
}

/**
 * the team part of this workspace's daemon, or undefined when this machine is in no team;
 * `ended`: a job the daemon knows has ended (put to rest), passed over without reading it
 */
export function teamPart(
  deps: Deps,
  team: Team,
  ended: (id: string) => boolean = () => false,
  onPresence?: (host: string, wsId: string, online: boolean, at: number, log: (line: string) => void) => Promise<void>,
): TeamPart {
  const env = deps.env;
  const host = hostName(env);
  const tp = teamPrefix(team, env);
  const wsId = workspaceId(deps.ws);
  const self = { team, host, wsId, tp };
  const online = onlineTopic(tp, host, wsId);
  const deliveries = `${tp}/deliver/${host}/${wsId}/`;
  /** the team's online states (retained): a host that goes offline is news (notifications) */
  const onlines = `${tp}/online/`;
  const presences = `${tp}/presence/`;
  /** what this daemon hears of the team's presence and online states, for readers of the roster (lib/team/heard.ts) */
  const heard = new HeardRoster(deps.ws, team, tp);
  /** when this daemon's current connection began (extras() is asked for each one): orders its online states */
  let since = Date.now();
  const onlineMsg = (on: boolean) => seal(team, "online", host, { online: on, at: Date.now(), host, ws_id: wsId, since } satisfies Online);
  const offline = () => onlineMsg(false);
  /** the newest online state seen of each other workspace (onlineOrder): an older one is a replay */
  const lastOnline = new Map<string, number>();
  const ignored = new Map<string, number>();
  let lastPresence = "";
  let lastSent = 0;
  let registrySig = "";
  let jobsDirty = true;
  /** the deliveries this daemon took (the broker may hand one over twice: queued and retained) */
  const taken = new Set<string>();
  /** what was sent again on this connection (lib/ops/react/forward.ts) */
  const forwarder = new Forwarder();
  /**
   * the job topic of a copy of another host's job, when the daemon's own subscriptions do not
   * cover it (a job of an older mam is on <prefix>/<id>, which they do: lib/jobs/broker-config.ts)
   */
  const cfg = brokerConfigFromEnv(env);
  const copyTopic = (r: Pick<JobRecord, "job_id" | "topic_prefix">): string | undefined => {
    const t = `${r.topic_prefix}/events`;
    return t !== eventsTopic(cfg, r.job_id) ? t : undefined;
  };
  /** by delivery id: when this daemon last published a kept delivery again (./kept-offers.ts) */
  const reoffered = new Map<string, number>();
  /**
   * the deliveries this host offered that are not received yet, published again: on a new
   * connection (`fresh`: a restarted broker lost its retained messages) and every REOFFER_MS
   */
  const reoffer = async (ctx: HookContext, fresh: boolean) => {
    if (ctx.mode !== "mqtt") return;
    const k = await import("../../team/kept-offers.ts");
    const now = Date.now();
    const forget = (d: string, why?: string) => {
      k.forgetOffer(deps.ws, d);
      reoffered.delete(d);
      if (why) ctx.log(`team: removed the kept delivery ${d}: ${why}`);
    };
    for (const d of k.keptOffers(deps.ws)) {
      const jobId = d.slice(0, 8);
      let job: import("../../team/kept-offers.ts").KeptJob | undefined;
      try {
        const r = deps.jobs.read(jobId);
        job = r ? { final: isFinal(r.status), notOwn: deps.jobs.notOwn(r), events: deps.jobs.journal(jobId) } : undefined;
      } catch {
        continue; // a record that does not read: `job status` says why
      }
      const v = k.keptVerdict(d, job, tp, k.keptAt(deps.ws, d), reoffered.get(d), now, fresh);
      if (v.do === "wait") continue;
      if (v.do === "forget") {
        forget(d, v.why === "received" || v.why === "its job has ended" ? undefined : v.why);
        continue;
      }
      const sealed = k.readKept(deps.ws, d);
      if (sealed === undefined || !k.keptOpens(team, host, d, v.topic, sealed)) {
        forget(d, `not a delivery this host sealed for ${v.topic}`);
        continue;
      }
      if (!(await ctx.publish(v.topic, sealed, { retain: true }))) continue;
      // taken meanwhile: the reactor cleared the retained delivery already, so clear it again
      if (deps.jobs.journal(jobId).some((e) => e.event === "received" && e.data?.delivery === d)) await ctx.publish(v.topic, "", { retain: true });
      // said once per delivery (a host offline for a day would otherwise add a line a minute)
      if (!reoffered.has(d)) ctx.log(`team: offered delivery ${d} again (not received yet)`);
      reoffered.set(d, now);
    }
  };
  /** the copies' topics subscribed to on this connection, by job id */
  const copyTopics = new Map<string, string>();
  /** the copies' topics: a taken delivery's at once, each unfinished copy's on each connection; an ended copy's dropped */
  const followCopy = (r: Pick<JobRecord, "job_id" | "topic_prefix">, ctx: HookContext) => {
    const t = copyTopic(r);
    if (!t || copyTopics.get(r.job_id) === t) return;
    copyTopics.set(r.job_id, t);
    ctx.subscribe([t]);
  };
  const dropEndedCopies = (ctx: HookContext) => {
    for (const [id, t] of copyTopics) {
      let r: JobRecord | undefined;
      try {
        r = deps.jobs.read(id);
      } catch {
        continue;
      }
      if (r && !isFinal(r.status)) continue;
      copyTopics.delete(id);
      ctx.unsubscribe([t]);
    }
  };
  const emitOn = (ctx: HookContext) => async (a: Appended) => {
    if (a.record) await ctx.publish(`${a.record.topic_prefix}/events`, a.line);
  };

  const regSig = () => {
    try {
      const st = statSync(deps.registry.path);
      return `${st.mtimeMs}:${st.size}:${st.ino}`;
    } catch {
      return "none";
    }
  };

  const presence = async (): Promise<Presence> => {
    const { sessionStatus } = await import("../session/status-run.ts");
    const doc = await sessionStatus(deps, false, undefined, false);
    const agents = doc.sessions
      .filter((s) => s.status === "running")
      .map((s) => ({ name: s.name, agent: s.agent, role: s.role, status: s.status, live: s.live, job: s.job }));
    return { host, workspace: deps.ws, ws_id: wsId, at: Date.now(), since, protocol: TEAM_PROTOCOL, agents };
  };

  /**
   * the end of our jobs whose agents are on other hosts, ended in the last day, published again
   * on every connection: a cancel or a timeout journalled while this host was cut off from the
   * broker still reaches the agent's host (which drops it if it has it)
   */
  const resendEnds = async (ctx: HookContext) => {
    const [{ isFinal }, { endsJob }, { canonicalJson }] = await Promise.all([
      import("../../jobs/statuses.ts"),
      import("../../jobs/event.ts"),
      import("../../jobs/canonical.ts"),
    ]);
    const since = Date.now() - RESEND_ENDS_MS;
    for (const id of deps.jobs.ids()) {
      try {
        const r = deps.jobs.read(id);
        if (!r || r.remote_of || !isFinal(r.status) || Date.parse(r.updated_at) < since) continue;
        if (!r.agent_session.includes("@") && !r.reviewer_session?.includes("@")) continue;
        const end = deps.jobs.journal(id).find((e) => endsJob(e, r));
        if (end && end.source !== r.agent_session && end.source !== r.reviewer_session) await ctx.publish(`${r.topic_prefix}/events`, canonicalJson(end));
      } catch {}
    }
  };

  /**
   * this workspace's online state and presence, said again soon for workspaces that came online
   * (once for all that come within ANNOUNCE_MS); the same online state again is no news to those
   * that heard it (onlineOrder), so the answers end there
   */
  let announcing = false;
  const announce = (ctx: HookContext) => {
    if (announcing) return;
    announcing = true;
    ctx.aside("team-announce", "announce", async (c) => {
      await new Promise((r) => setTimeout(r, ANNOUNCE_MS));
      announcing = false;
      if (c.mode !== "mqtt") return;
      await c.publish(online, onlineMsg(true), { retain: true });
      await part.tick(c, "force");
    });
  };

  /**
   * Does this broker hand a reader the retained presence (Mosquitto does; RabbitMQ keeps it per
   * node and serves none to a wildcard)? A connection subscribes to every presence, for the heard
   * roster; once this workspace's own presence is read back from the broker, the readers of the
   * roster find it there and the subscription is dropped: each presence of a busy team is a
   * message to every daemon (BENCH.md, 10 hosts). Asked again on each connection.
   */
  let servesRetained: boolean | undefined;
  const probeRetained = async (c: HookContext) => {
    const { readRetained } = await import("../../jobs/transport.ts");
    for (const waitMs of [300, 2000]) {
      await new Promise((r) => setTimeout(r, waitMs)); // this connection's presence stored first
      const got = await readRetained(cfg, [`${presences}#`], { marker: syncTopic(tp) });
      if (!got) return; // no answer: keep hearing them
      if ([...got.keys()].some((t) => sameTopic(t, presenceTopic(tp, host, wsId)))) {
        c.unsubscribe([`${presences}#`]);
        if (servesRetained !== true) c.debug("team: the broker serves retained presence: the roster is read from it");
        servesRetained = true;
        return;
      }
    }
    if (servesRetained !== false) c.log("team: the broker serves no retained presence to a wildcard (a cluster's node?): every presence is heard as it is published (.mam/team-heard.json)");
    servesRetained = false;
  };

  const part: TeamPart = {
    host,
    tp,
    extras: () => {
      since = Math.max(Date.now(), since + 1);
      copyTopics.clear();
      for (const id of deps.jobs.ids()) {
        if (ended(id)) continue;
        try {
          const r = deps.jobs.read(id);
          const t = r?.remote_of && !isFinal(r.status) ? copyTopic(r) : undefined;
          if (t) copyTopics.set(id, t);
        } catch {}
      }
      // `#`, not `+/+`: RabbitMQ's '+' matches no host name with a '.' in it (sameTopic)
      return { topics: [deliveriesOf(tp, host, wsId), `${onlines}#`, `${presences}#`, ...new Set(copyTopics.values())], will: { topic: online, payload: offline() } };
    },
    owns: (topic) => underTopic(topic, deliveries) || underTopic(topic, onlines) || underTopic(topic, presences),
    async onMessage(topic, payload, ctx) {
      if (underTopic(topic, presences) || underTopic(topic, onlines)) {
        // sealed by the host it names, for its own topic (an empty payload: a cleared topic); a
        // copy from another workspace's topic, or an older mam's, is ignored
        const e = heard.note(topic, payload.toString("utf8")).entry;
        heard.flush();
        if (e?.what !== "online") return;
        const b = e.online;
        const [h, w] = [b.host, b.ws_id];
        // freshness: one older than the newest seen (a replay) or the same again changes nothing
        const order = onlineOrder(b);
        const newest = lastOnline.get(`${h}/${w}`) ?? -1;
        if (order < newest) {
          // logged once per message (a replayer repeating it adds no line)
          if (ignored.get(`${h}/${w}`) !== order) ctx.log(`team: ignored an ${b.online ? "online" : "offline"} state of ${h}/${w} older than the newest seen (a replay?)`);
          ignored.set(`${h}/${w}`, order);
          return;
        }
        if (order === newest) return; // the same state again (the heartbeat, a reconnect)
        if (lastOnline.size > 10_000) {
          lastOnline.clear();
          ignored.clear();
        }
        lastOnline.set(`${h}/${w}`, order);
        await onPresence?.(h, w, b.online, b.at, ctx.log);
        // a workspace that came online may have missed this one's presence (a broker that serves
        // no retained message to a wildcard: lib/team/heard.ts): say it again, once for a burst
        if (b.online && (h !== host || w !== wsId)) announce(ctx);
        return;
      }
      const { takeDelivery, typeDelivery } = await import("../job/receive.ts");
      const r = await takeDelivery(deps, self, topic, payload, emitOn(ctx), (id) => taken.has(id));
      for (const l of r.log) ctx.log(l);
      const t = r.taken;
      if (!t) return;
      if (taken.size > 10_000) taken.clear();
      taken.add(t.d.id);
      jobsDirty = true;
      followCopy(t.d.job, ctx);
      // typing takes a while (it waits out pauses): beside the hooks, one at a time per agent, so
      // that the broker's messages and the hooks do not wait for it
      ctx.aside(`deliver:${t.d.to}`, "deliver", async (c) => {
        await c.settled(); // `received` has gone out first
        for (const l of await typeDelivery(deps, self, t, emitOn(c))) c.log(l);
        jobsDirty = true;
      });
    },
    async typeQueued(d, ctx) {
      const { typeDelivery } = await import("../job/receive.ts");
      const queued = deps.jobs.journal(d.job_id).findLast((e) => e.event === "queued");
      const delivery = typeof queued?.data?.delivery === "string" ? queued.data.delivery : `${d.job_id}.00000000`;
      const r = d.record;
      const taken = {
        d: { id: delivery, job: r, to: r.agent_session, purpose: "job" as const, from_host: r.remote_of!, deadline: Number.MAX_SAFE_INTEGER, ws_id: wsId, topic: deliveryTopic(tp, host, wsId, delivery) },
        what: "the job",
        source: `mam@${host}`,
      };
      for (const l of await typeDelivery(deps, self, taken, emitOn(ctx), { mayQueue: false })) ctx.log(l);
      jobsDirty = true;
    },
    async recover(ctx) {
      const { settleInterrupted } = await import("../job/receive.ts");
      for (const l of await settleInterrupted(deps, self, undefined, emitOn(ctx))) ctx.log(l);
    },
    async connected(ctx) {
      forwarder.reset();
      await ctx.publish(online, onlineMsg(true), { retain: true });
      await part.tick(ctx, "force");
      await reoffer(ctx, true);
      await part.forward(ctx);
      await resendEnds(ctx);
      ctx.aside("team-probe", "probe", probeRetained);
    },
    async tick(ctx, how) {
      heard.flush(); // what was heard in the second before the last write
      if (ctx.mode !== "mqtt") return;
      const force = how === "force";
      const sig = regSig();
      const due = Date.now() - lastSent >= HEARTBEAT_MS;
      if (how === "check" && !due && !jobsDirty && sig === registrySig) return;
      if (jobsDirty || how !== "check") dropEndedCopies(ctx);
      registrySig = sig;
      jobsDirty = false;
      const p = await presence();
      const key = JSON.stringify(p.agents);
      if (!force && !due && key === lastPresence) return;
      if (await ctx.publish(presenceTopic(tp, host, wsId), seal(team, "presence", host, p), { retain: true })) {
        lastPresence = key;
        lastSent = Date.now();
        // said again with the heartbeat: a replayed `offline` that replaced it on the broker lasts a heartbeat at most
        if (due) await ctx.publish(online, onlineMsg(true), { retain: true });
      }
    },
    jobsChanged: () => void (jobsDirty = true),
    async forward(ctx) {
      if (ctx.mode !== "mqtt") return;
      await reoffer(ctx, false);
      const { unheld } = await import("./forward.ts");
      const now = Date.now();
      const copies: JobRecord[] = [];
      for (const id of deps.jobs.ids()) {
        // an ended job at rest (its journal unchanged) that needs nothing more: not read again
        if (ended(id) && forwarder.settled(id)) continue;
        try {
          const r = deps.jobs.read(id);
          if (r && forwarder.wants(r, now)) copies.push(r);
        } catch {}
      }
      if (copies.length === 0) return;
      const [{ brokerConfigFromEnv }, { readRetainedAndReply }, { ackHolds, ackTopicOf, readAck }, { canonicalJson }, { isFinal }] = await Promise.all([
        import("../../jobs/broker-config.ts"),
        import("../../jobs/transport.ts"),
        import("../../jobs/acks.ts"),
        import("../../jobs/canonical.ts"),
        import("../../jobs/statuses.ts"),
      ]);
      const ackTopic = (r: JobRecord) => ackTopicOf(`${r.topic_prefix}/events`);
      const sent: string[] = [];
      // read the acks and send what they miss on one fresh connection: after a cut, the daemon's
      // own connection may stay stalled in TCP's backoff until its keepalive gives up on it
      const r = await readRetainedAndReply(
        brokerConfigFromEnv(env),
        copies.map(ackTopic),
        (acks) => {
          const out: Outgoing[] = [];
          for (const rec of copies) {
            const origin = deps.jobs.origin(rec.job_id);
            if (origin === undefined) continue; // nothing written here yet
            const raw = acks.get(ackTopic(rec));
            const marks = raw && readAck(raw, rec.job_id, rec.auth_token);
            const missing = unheld(deps.jobs.journal(rec.job_id), origin, (o, seq) => ackHolds(marks, o, seq), Date.now());
            const send = forwarder.due(rec, missing, isFinal(rec.status), Date.now());
            if (send.length === 0) continue;
            for (const e of send) out.push({ topic: `${rec.topic_prefix}/events`, payload: canonicalJson(e) });
            sent.push(`job ${rec.job_id}: sent ${send.length} event(s) again that ${rec.remote_of} had not acknowledged`);
          }
          return out;
        },
        { quietMs: 200, maxMs: 1500 },
      );
      if (!r || sent.length === 0) return;
      if (!r.sent.ok) {
        forwarder.reset(); // not sent after all: due again at the next poll
        ctx.log(`team: could not send again what the delegators miss (${r.sent.reason})`);
        return;
      }
      for (const l of sent) ctx.log(l);
    },
    farewell: () => ({ topic: online, payload: offline() }),
  };
  return part;
}

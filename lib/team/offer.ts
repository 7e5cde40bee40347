// Sending work to an agent on another host (docs/machines.md): find it in the fleet its hosts
// announce, and offer it a delivery. The offer is journalled here first (`offered`, with the
// delivery's id and its retained topic), then published on one connection: the `offered` event on
// the job's events topic, then the sealed delivery, retained on the workspace's delivery topic so
// that a host that is offline gets it when it returns. Its daemon takes it from there
// (lib/ops/job/receive.ts); ours clears the retained delivery once it is `received`, and until
// then publishes it again should the broker lose it (./kept-offers.ts).
import { randomBytes } from "../sys/digest.ts";
import { readFileSync } from "node:fs";
import { brokerConfigFromEnv } from "../jobs/broker-config.ts";
import { endsJob, MAX_EVENT_BYTES } from "../jobs/event.ts";
import type { PromptAbout, RemoteRef } from "../jobs/runtime.ts";
import type { JobRecord, JobSpec, JobStore } from "../jobs/store.ts";
import { EXIT, MamError } from "../sys/errors.ts";
import { type Notice, note } from "../sys/notice.ts";
import type { Env } from "../sys/paths.ts";
import { isoUtc } from "../sys/time.ts";
import { requireTeam, type Team } from "./config.ts";
import { findRemote, readRoster } from "./roster.ts";
import { hostName, parseAddress } from "./host.ts";
import { type Delivery, deliveryTopic, globalRecord, teamPrefix } from "./messages.ts";
import { seal } from "./seal.ts";
import { forgetOffer, keepOffer } from "./kept-offers.ts";

/** a brief file travels as its text: the other host cannot read this machine's files */
const MAX_BRIEF_BYTES = 128 * 1024;

/**
 * a delivery once sealed must fit in what the receiving daemon takes of one message (its packet
 * guard: MAX_EVENT_BYTES); escaping and base64 make a text about 1.4 to 2.7 times larger
 */
export const MAX_SEALED_BYTES = MAX_EVENT_BYTES;

/** the refusal of a delivery too large once sealed (security review T11) */
export function tooLarge(size: number, what: string, to: string): MamError {
  return new MamError(
    `${what} for ${to} is ${size} bytes once sealed, over the ${MAX_SEALED_BYTES}-byte (${MAX_SEALED_BYTES / 1024} KiB) limit of a team message; nothing was sent`,
    EXIT.USAGE,
    "send a smaller prompt or brief (newlines, quotes and non-ASCII text take more room once escaped and sealed), or leave the material where the other host can reach it and name it in the brief",
  );
}

/** the size of a delivery once sealed (exact: the envelope's other fields have fixed lengths) */
export function sealedSize(team: Team, me: string, d: Delivery): number {
  return Buffer.byteLength(seal(team, "deliver", me, d));
}

/**
 * before a job for another host is registered (submit): refused when its delivery would be over
 * the limit once sealed; its record is made as registerJob makes it, with an id and a token of
 * the same lengths (fields a spec leaves null may count a few bytes more: never fewer)
 */
export function checkJobFits(env: Env, spec: JobSpec, to: RemoteRef): void {
  const team = requireTeam(env);
  const me = hostName(env);
  const t = isoUtc(Math.floor(Date.now() / 1000));
  const id = "00000000";
  const { topic_prefix_base, ...rest } = spec;
  const rec = { ...rest, schema_version: 1, job_id: id, status: "pending", created_at: t, updated_at: t, iteration: 1, topic_prefix: `${topic_prefix_base}/${id}`, last_seq: 0, auth_token: "x".repeat(43) } as JobRecord;
  const d = deliveryFor(rec, me, to, { purpose: "job", job: rec }, `${id}.00000000`, deliveryTopic(teamPrefix(team, env), to.remote.host, to.remote.ws_id, `${id}.00000000`));
  const size = sealedSize(team, me, d);
  if (size > MAX_SEALED_BYTES) throw tooLarge(size, "the job", to.name);
}

/**
 * when a job's clock started: its dispatch when it waited (a job that ran after others is offered
 * once they have ended), else its creation (lib/jobs/ingest.ts counts its timeout the same way)
 */
function clockStart(job: JobRecord, jobs?: JobStore): number {
  const dispatched = jobs?.journal(job.job_id).findLast((e) => e.event === "dispatched");
  return Math.floor(Date.parse(dispatched?.timestamp ?? job.created_at) / 1000);
}

function deliveryFor(job: JobRecord, me: string, to: RemoteRef, about: PromptAbout, id: string, topic: string, jobs?: JobStore): Delivery {
  return {
    id,
    job: shippedRecord(job, me),
    to: to.name,
    purpose: about.purpose,
    ...(about.detail !== undefined ? { detail: about.detail } : {}),
    ...(about.iteration !== undefined ? { iteration: about.iteration } : {}),
    from_host: me,
    deadline: clockStart(job, jobs) + (job.timeout_sec > 0 ? job.timeout_sec : 365 * 86400),
    ws_id: to.remote.ws_id,
    topic,
  };
}

/** the running session `name@host` as the team's hosts announce it */
export async function findRemoteSession(env: Env, address: string, ws?: string): Promise<RemoteRef> {
  const team = requireTeam(env);
  const me = hostName(env);
  const a = parseAddress(address, me);
  if (a.host === undefined) throw new MamError(`${address} is on this host`, EXIT.USAGE);
  const fleet = await readRoster(brokerConfigFromEnv(env), team, env, ws);
  const r = findRemote(fleet, a.name, a.host);
  return { name: `${a.name}@${a.host}`, agent: r.agent ?? "unknown", remote: { host: r.host, ws_id: r.ws_id, workspace: r.workspace, online: r.online } };
}

/** the record as it travels: names global, a brief file as its text */
export function shippedRecord(job: JobRecord, me: string): JobRecord {
  const g = globalRecord(job, me);
  if (g.brief_file === undefined) return g;
  let text: string;
  try {
    const b = readFileSync(g.brief_file);
    if (b.length > MAX_BRIEF_BYTES) throw new MamError(`the brief file ${g.brief_file} is larger than ${MAX_BRIEF_BYTES / 1024} KiB`, EXIT.USAGE, "a job for another host carries its brief's text: shorten it");
    text = b.toString("utf8");
  } catch (e) {
    if (e instanceof MamError) throw e;
    throw new MamError(`cannot read the brief file ${g.brief_file} (${(e as Error).message})`, EXIT.FAIL);
  }
  const { brief_file: _drop, worktree: _wt, ...rest } = g;
  return { ...rest, prompt: `(the brief ${g.brief_file} on ${me}, as it was when the job was sent)\n${text}` };
}

/**
 * offer `about` to the remote session: journal `offered`, publish it and the delivery; a note when
 * the session's host is offline (it gets it when it returns). Throws when the broker does not take
 * it (the caller marks the job error) or the job has ended.
 */
export async function offer(env: Env, jobs: JobStore, to: RemoteRef, about: PromptAbout): Promise<Notice | undefined> {
  const team = requireTeam(env);
  const me = hostName(env);
  const tp = teamPrefix(team, env);
  const cfg = brokerConfigFromEnv(env);
  const job = about.job;
  const id = `${job.job_id}.${randomBytes(4).toString("hex")}`;
  const topic = deliveryTopic(tp, to.remote.host, to.remote.ws_id, id);
  const delivery = deliveryFor(job, me, to, about, id, topic, jobs);
  const sealed = seal(team, "deliver", me, delivery);
  const what = about.purpose === "job" ? "the job" : about.purpose === "review" ? "the review request" : "the feedback";
  // the receivers drop a larger message unread: refused here, before anything is journalled or sent
  if (Buffer.byteLength(sealed) > MAX_SEALED_BYTES) throw tooLarge(Buffer.byteLength(sealed), what, to.name);
  const offline = to.remote.online ? "" : ` (${to.remote.host} is offline: it gets it when it returns)`;
  // kept until it is received: the daemon publishes it again should the broker lose it
  keepOffer(jobs.ws, id, sealed);
  const a = await jobs.append(job.job_id, (r, evs) =>
    r && !evs.some((e) => endsJob(e, r))
      ? { event: "offered", detail: `${what} for ${to.name}${offline}`, source: "mam", data: { delivery: id, topic, host: to.remote.host, ws_id: to.remote.ws_id, purpose: about.purpose } }
      : undefined,
  );
  if (!a) {
    forgetOffer(jobs.ws, id);
    throw new MamError(`job ${job.job_id} has ended; nothing was offered to ${to.name}`, EXIT.FAIL);
  }
  const { publishAll } = await import("../jobs/transport.ts");
  const r = await publishAll(cfg, [
    { topic: `${job.topic_prefix}/events`, payload: a.line },
    { topic, payload: sealed, retain: true },
  ]);
  if (!r.ok) throw new MamError(`the team's broker did not take the delivery for ${to.name} (${r.reason})`, EXIT.FAIL, "check that the broker runs: mam broker status");
  return offline ? note(`${to.name}: ${to.remote.host} is offline; it gets ${what} when it returns`) : undefined;
}

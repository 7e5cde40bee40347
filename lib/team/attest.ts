// A daemon's word for what it saw on its agents' screens (docs/approvals.md, docs/machines.md).
// A job's events are signed with the job's token, which its agent holds too: the signature says
// "someone with the token", never "the daemon". A dialog's question is the daemon's own
// observation, and the notifications and `mam approve` act on it, so when the agent runs on
// another host of the team its daemon vouches for the question it journals on its copy of the job:
// `data.attest = {host, mac}`, the mac an HMAC-SHA256 of the whole event (its origin and seq, the
// question, the session; without `hmac_sig`, with `attest` as `{host}`), keyed by a key derived
// from the team secret, which only the team's daemons hold (an agent's `mam job event` cannot make
// one). The delegator's daemon takes such a question from the broker only when the host that
// vouches for it is the one of the job's session it names (vouchedQuestion).
import { createHmac, timingSafeEqual } from "node:crypto";
import { canonicalJson, type Json } from "../jobs/canonical.ts";
import type { JobEvent } from "../jobs/event.ts";
import { type Team, teamKey } from "./config.ts";

const keyOf = (t: Team) => teamKey(t, "mam daemon attest v1");

function macOf(t: Team, host: string, ev: JobEvent): string {
  const { hmac_sig: _sig, attest: _attest, ...data } = ev.data;
  return createHmac("sha256", keyOf(t))
    .update(canonicalJson({ ...ev, data: { ...data, attest: { host } } }))
    .digest("hex");
}

/** the data a daemon adds to an event it journals (appendEvent's `vouch`): its attestation */
export function attest(t: Team, host: string, ev: JobEvent): { attest: Json } {
  return { attest: { host, mac: macOf(t, host, ev) } };
}

/**
 * A daemon's question (isDaemonQuestion) heard on the broker, for the job `rec` of this host
 * `self`: undefined when the daemon of the host of the session it names vouches for it, else why
 * it is not taken (the daemon drops it and logs that). Pure.
 */
export function vouchedQuestion(t: Team | undefined, self: string, rec: { agent_session: string; reviewer_session?: string | null }, ev: JobEvent): string | undefined {
  if (!t) return "this workspace is in no team (only its own daemon reads its agents' dialogs)";
  const a = ev.data.attest as { host?: unknown; mac?: unknown } | undefined;
  if (!a || typeof a !== "object" || typeof a.host !== "string" || typeof a.mac !== "string" || !/^[0-9a-f]{64}$/.test(a.mac)) return "no daemon of the team vouches for it";
  const session = ev.data.session;
  if (typeof session !== "string" || !session.endsWith(`@${a.host}`) || (session !== rec.agent_session && session !== rec.reviewer_session)) {
    return `it is vouched for by ${a.host.slice(0, 64)}, which is not the host of the job's session it names`;
  }
  if (a.host === self) return "it says it is from this host's daemon (whose events are never heard from the broker)";
  let want: string;
  try {
    want = macOf(t, a.host, ev);
  } catch {
    return "no daemon of the team vouches for it";
  }
  return timingSafeEqual(Buffer.from(want), Buffer.from(a.mac)) ? undefined : `its attestation from ${a.host.slice(0, 64)} does not hold`;
}

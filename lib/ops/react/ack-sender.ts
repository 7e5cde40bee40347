// The daemon's side of acknowledgements (lib/jobs/acks.ts): after it journals (or recognises) a
// job's event, it publishes that job's marks (and the seqs held beyond them), retained, at most once per period per job, and only
// when they changed since the last publish on this connection (forgetSent() after a reconnect: a
// broker restarted without persistence has lost its retained messages). On the record's topic,
// and also on <prefix>/<id>/acks once a report came by token on <prefix>/<id>/events (a reporter
// with no record of the job reads its acks there: lib/jobs/broker-config.ts).
import { signedAck } from "../../jobs/acks.ts";
import type { JournalCache } from "../../jobs/journal-index.ts";
import type { JobRecord } from "../../jobs/store.ts";
import { isoUtc } from "../../sys/time.ts";

export type RetainedPublish = (topic: string, payload: string, opts: { retain: boolean }) => Promise<boolean>;

export class AckSender {
  private due = new Map<string, ReturnType<typeof setTimeout>>();
  /** by ack topic: what was said there */
  private sent = new Map<string, string>();
  /** by job: the old ack topic, once a report came on the old events topic */
  private also = new Map<string, string>();

  constructor(
    private ws: string,
    private journals: JournalCache,
    private periodMs = 100,
  ) {}

  /**
   * publish this job's marks within periodMs (one publish for a burst of events); `alsoOn`: an
   * ack topic besides the record's (the old one, where a reporter by token reads them)
   */
  note(rec: JobRecord, publish: RetainedPublish, alsoOn?: string): void {
    if (alsoOn !== undefined && alsoOn !== `${rec.topic_prefix}/acks`) this.also.set(rec.job_id, alsoOn);
    if (this.due.has(rec.job_id)) return;
    const t = setTimeout(() => {
      this.due.delete(rec.job_id);
      void this.send(rec, publish);
    }, this.periodMs);
    (t as { unref?: () => void }).unref?.();
    this.due.set(rec.job_id, t);
  }

  /** publish now; false when there was nothing new to say or no connection */
  async send(rec: JobRecord, publish: RetainedPublish): Promise<boolean> {
    const j = this.journals.peek(this.ws, rec.job_id);
    if (!j) return false;
    const acked = j.index.acked();
    const beyond = j.index.beyond();
    if (Object.keys(acked).length === 0 && Object.keys(beyond).length === 0) return false;
    const text = JSON.stringify([acked, beyond]);
    const topics = [`${rec.topic_prefix}/acks`, ...(this.also.has(rec.job_id) ? [this.also.get(rec.job_id)!] : [])].filter((t) => this.sent.get(t) !== text);
    if (topics.length === 0) return false;
    const ack = signedAck(rec.job_id, acked, rec.auth_token, isoUtc(), beyond);
    let ok = true;
    for (const t of topics) {
      if (await publish(t, ack, { retain: true })) this.sent.set(t, text);
      else ok = false;
    }
    return ok;
  }

  /** a new connection: every job's marks are news again */
  forgetSent(): void {
    this.sent.clear();
  }

  close(): void {
    for (const t of this.due.values()) clearTimeout(t);
    this.due.clear();
  }
}

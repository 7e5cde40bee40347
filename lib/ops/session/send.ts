// Typing one line into a running session's agent (mam ui's "send"): only at its input prompt,
// never into a dialog or into a pane whose agent is gone (a bare shell would run the line).
import { isRemote } from "../../jobs/runtime.ts";
import { EXIT, MamError, notFound, usageError } from "../../sys/errors.ts";
import type { Notice } from "../../sys/notice.ts";
import type { Deps } from "../deps.ts";

export interface SendInput {
  name: string;
  text: string;
}

export interface Sent {
  name: string;
  pane: string;
  warnings: Notice[];
}

export async function sendLine(deps: Deps, o: SendInput): Promise<Sent> {
  const s = await deps.runtime.findSession(o.name);
  if (!s) throw notFound(`no running session ${o.name} with a live pane`, "see: mam status");
  if (isRemote(s)) throw usageError(`${o.name} is on another host: mam send types into this host's sessions only`, "run mam send on that host");
  if (s.gone) throw new MamError(`session '${o.name}' has no agent any more (${s.gone}); nothing was sent`, EXIT.FAIL, `mam resume ${o.name} starts it again`);
  const w = await deps.runtime.prompt(s, o.text);
  return { name: o.name, pane: s.paneId, warnings: w ? [w] : [] };
}

// Which herdr release the fake plays: FAKE_HERDR_VERSION (default 0.8.0), read by the server and
// by the CLI, each from its own environment (a real herdr binary has one version; a CLI and a
// server of different releases answer protocol_mismatch, as herdr's do).
//
// The fake knows two behaviours, taken from herdr's source at the tags v0.8.0 and v0.8.2:
//   "0.8.0"  versions below 0.8.1
//   "0.8.2"  0.8.1 and newer (the withdrawn 0.8.1 already carried the 0.8.2 changes below; a
//            newer version, 0.9.x, plays the newest release the fake knows)
// What differs (docs/herdr-compat.md has the list with the commits):
//   protocol                 19 → 20 (src/protocol/wire.rs)
//   agent.prompt             a blocked agent → agent_blocked, nothing sent (src/app/api/agents.rs)
//   agent start              ready only when idle; blocked during startup → agent_not_ready at
//                            once, the agent keeps its name (src/terminal/state.rs, src/cli/agent.rs);
//                            agent_pane_busy retried for 2 s while the new pane's shell starts
//   detection                a newly detected agent is `unknown` until the startup grace has
//                            passed (src/pane.rs, src/pane/agent_detection.rs); the qwen kind
//   claude screen rule       "Enter to confirm … Esc to cancel" is blocked (src/detect/manifests/claude.toml)
//   panes                    HERDR_BIN_PATH in every pane (src/integration/env.rs)
//   CLI                      pane read / wait-output take --flag=value and options in any order,
//                            bad values exit 2; process-info / layout --current use HERDR_PANE_ID
//                            (src/cli/pane.rs)

export type Release = "0.8.0" | "0.8.2";

/** the `herdr --version` / ping version the fake reports */
export function fakeVersion(env: Record<string, string | undefined> = process.env): string {
  return env.FAKE_HERDR_VERSION || "0.8.0";
}

/** the behaviour a version plays */
export function releaseOf(version: string): Release {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!m) return "0.8.0";
  const [a, b, c] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const below081 = a === 0 && (b < 8 || (b === 8 && c < 1));
  return below081 ? "0.8.0" : "0.8.2";
}

export function fakeRelease(env: Record<string, string | undefined> = process.env): Release {
  return releaseOf(fakeVersion(env));
}

/** the API protocol of a release (ping's `protocol`; PROTOCOL_VERSION in src/protocol/wire.rs) */
export function protocolOf(r: Release): number {
  return r === "0.8.0" ? 19 : 20;
}

/**
 * the protocol the fake reports: FAKE_HERDR_PROTOCOL, else its release's; a version before 0.8.0
 * (played as 0.8.0 otherwise) speaks an older protocol, 18, as herdr releases before 0.8.0 did
 */
export function fakeProtocol(env: Record<string, string | undefined> = process.env): number {
  const v = Number(env.FAKE_HERDR_PROTOCOL);
  if (env.FAKE_HERDR_PROTOCOL && Number.isInteger(v)) return v;
  const [maj = 0, min = 0] = fakeVersion(env).split(".").map(Number);
  return maj === 0 && min < 8 ? 18 : protocolOf(fakeRelease(env));
}

// What an agent's sandbox lets it see and reach (docs/sandbox.md): the mounts and the network of a
// bubblewrap sandbox, from what mam knows of the agent. Pure: the paths are given (./inputs.ts
// reads them from the machine), the result is a list of mounts that `bwrapArgs` turns into bwrap's
// command line and `explainText` into what `mam sandbox explain` prints, so the two never differ.
//
// The shape, in bwrap's order (a later mount lies over an earlier one; deeper paths come later):
//   /            read-only (the system, and whatever the user installed outside the hidden roots)
//   /dev /proc   fresh ones (a private /dev/shm; /proc of the sandbox's own processes)
//   /tmp /var/tmp /run HOME   empty (tmpfs): nothing of the user's, no sockets (ssh-agent, docker,
//                dbus: a read-only bind would still let a socket be connected to)
//   the workspace           read-write, its .mam/ empty; or, for an agent in a worktree, empty but
//                           for its .git (read-write: commits) and the worktree (read-write)
//   what the agent runs     read-only again where a hidden root held it (its install, PATH's
//                           folders under HOME, mam's binary, git's config for its commits)
//   its own store           read-write again (claude: ~/.claude and ~/.claude.json)
//   /run/mam                the supervisor's sockets: mam's reports, and with net model the relays
import { isAbsolute, relative } from "node:path";

export const NET_MODES = ["none", "model", "all"] as const;
export type NetMode = (typeof NET_MODES)[number];
export const SANDBOX_MODES = ["none", "bwrap"] as const;

/** a session's sandbox as its row keeps it (absent: none) */
export interface SandboxSpec {
  mode: "bwrap";
  net: NetMode;
  /** net model: the endpoints the agent may reach, HOST:PORT */
  allow?: string[];
}

/** where the supervisor's socket folder appears inside */
export const INSIDE_DIR = "/run/mam";
/** the socket mam's reports from inside go through (./forward.ts) */
export const REPORT_SOCKET = "mam.sock";

export interface PlanInput {
  home: string;
  ws: string;
  /** the folder the agent works in: the workspace, or its worktree */
  cwd: string;
  /** what the agent reads that a hidden root may hold: its install, PATH's folders, mam's binary, git's config */
  ro: string[];
  /** the agent's own config and conversation store */
  rw: string[];
  /** outside: the supervisor's socket folder (bound at INSIDE_DIR) */
  socketDir: string;
  net: NetMode;
  /** /etc/resolv.conf's target, when it lies under a hidden root (systemd-resolved's, under /run) */
  resolv?: string;
}

export type Mount =
  | { type: "ro" | "rw"; path: string; why: string; optional?: boolean; src?: string }
  | { type: "tmpfs" | "dev" | "proc"; path: string; why: string };

export interface Plan {
  mounts: Mount[];
  net: NetMode;
  cwd: string;
}

/** `p` is `root` or lies under it */
export function under(p: string, root: string): boolean {
  const r = relative(root, p);
  return r === "" || (!r.startsWith("..") && !isAbsolute(r));
}

const depth = (p: string) => p.split("/").filter(Boolean).length;

/** the paths emptied inside (what `ro` entries under them are bound again for) */
export function hiddenRoots(i: Pick<PlanInput, "home" | "ws" | "cwd">): string[] {
  return ["/tmp", "/var/tmp", "/run", i.home, ...(i.cwd !== i.ws ? [i.ws] : [])];
}

/**
 * why a sandbox cannot hide what it must for this workspace (undefined: it can): a workspace that
 * is the home folder, or holds it, would bind ~/.ssh read-write
 */
export function refusal(i: Pick<PlanInput, "home" | "ws">): string | undefined {
  if (under(i.home, i.ws)) return `the workspace ${i.ws} holds the home folder ${i.home}: a sandbox cannot hide ~/.ssh from an agent that works there`;
  if (i.ws === "/") return "the workspace is /";
  return undefined;
}

export function sandboxPlan(i: PlanInput): Plan {
  const base: Mount[] = [
    { type: "ro", path: "/", why: "the system, read-only" },
    { type: "dev", path: "/dev", why: "a fresh /dev" },
    { type: "proc", path: "/proc", why: "the sandbox's own processes" },
  ];
  const hidden = hiddenRoots(i);
  const layers: Mount[] = [];
  for (const p of ["/tmp", "/var/tmp", "/run"]) layers.push({ type: "tmpfs", path: p, why: "empty (private)" });
  layers.push({ type: "tmpfs", path: i.home, why: "the home folder, empty" });
  if (i.cwd === i.ws) {
    layers.push({ type: "rw", path: i.ws, why: "the workspace" });
    layers.push({ type: "tmpfs", path: `${i.ws}/.mam`, why: "mam's state, hidden" });
  } else {
    layers.push({ type: "tmpfs", path: i.ws, why: "the workspace, hidden (the agent has a worktree)" });
    layers.push({ type: "rw", path: `${i.ws}/.git`, why: "the repository (its worktree commits there)", optional: true });
    layers.push({ type: "rw", path: i.cwd, why: "its worktree" });
  }
  const bound = new Set(layers.map((m) => m.path));
  const writable = layers.filter((m) => m.type === "rw").map((m) => m.path);
  for (const p of i.ro) {
    if (bound.has(p) || !hidden.some((h) => under(p, h)) || writable.some((w) => under(p, w))) continue;
    bound.add(p);
    layers.push({ type: "ro", path: p, why: "what the agent runs or reads", optional: true });
  }
  for (const p of i.rw) {
    if (bound.has(p)) continue;
    bound.add(p);
    layers.push({ type: "rw", path: p, why: "the agent's own config and conversations", optional: true });
  }
  if (i.resolv && i.net !== "none" && hidden.some((h) => under(i.resolv!, h))) layers.push({ type: "ro", path: i.resolv, why: "name resolution", optional: true });
  // deeper paths over shallower ones (a stable sort keeps the order of equals)
  layers.sort((a, b) => depth(a.path) - depth(b.path));
  const tail: Mount[] = [{ type: "rw", path: INSIDE_DIR, src: i.socketDir, why: "mam's sockets (reports, relays)" }];
  return { mounts: [...base, ...layers, ...tail], net: i.net, cwd: i.cwd };
}

/** bwrap's arguments for the plan, up to (not with) the command */
export function bwrapArgs(plan: Plan, env: Record<string, string>): string[] {
  const a: string[] = [];
  for (const m of plan.mounts) {
    if (m.type === "tmpfs") a.push("--tmpfs", m.path);
    else if (m.type === "dev") a.push("--dev", m.path);
    else if (m.type === "proc") a.push("--proc", m.path);
    else if (m.type === "ro" || m.type === "rw") a.push(`--${m.type === "ro" ? "ro-bind" : "bind"}${m.optional ? "-try" : ""}`, m.src ?? m.path, m.path);
  }
  a.push("--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-cgroup-try");
  if (plan.net !== "all") a.push("--unshare-net");
  a.push("--die-with-parent", "--chdir", plan.cwd);
  // a socket that the hidden roots took away would only mislead the agent's tools
  a.push("--unsetenv", "SSH_AUTH_SOCK", "--unsetenv", "GPG_AGENT_INFO", "--unsetenv", "DBUS_SESSION_BUS_ADDRESS");
  for (const [k, v] of Object.entries(env)) a.push("--setenv", k, v);
  return a;
}

const NET_TEXT: Record<NetMode, string> = {
  none: "none: a network namespace of its own with only its loopback",
  model: "model: its own loopback; only the endpoints below, through mam's relays",
  all: "all: the machine's network, as outside",
};

/** what `mam sandbox explain` prints: each mount and the network */
export function explainText(plan: Plan, allow: string[]): string {
  const w = Math.max(...plan.mounts.map((m) => m.path.length));
  const kind = (m: Mount) => (m.type === "ro" ? "read-only " : m.type === "rw" ? "read-write" : m.type === "tmpfs" ? "empty     " : "fresh     ");
  const lines = plan.mounts.map((m) => `  ${m.path.padEnd(w)}  ${kind(m)}  ${m.why}${"src" in m && m.src ? ` (${m.src})` : ""}${"optional" in m && m.optional ? " (if it exists)" : ""}`);
  const net = [`network: ${NET_TEXT[plan.net]}`, ...(plan.net === "model" ? allow.map((a) => `  ${a}`) : [])];
  return [`works in: ${plan.cwd}`, "mounts (in order; a later one lies over an earlier):", ...lines, ...net, "processes: its own (pid namespace); dies with its supervisor"].join("\n");
}

/** HOST:PORT, checked: a host name or address and a port 1..65535 */
export function parseEndpoint(s: string): { host: string; port: number } | undefined {
  const m = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(s);
  if (!m) return undefined;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return undefined;
  return { host: m[1]!.replace(/^\[|\]$/g, ""), port };
}

export const isLoopback = (host: string): boolean => host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);

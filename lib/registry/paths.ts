// Where the registry, its lock and its backup live (SPEC §2).
import { dirname, join, resolve } from "node:path";
import { type Env, mamDir } from "../sys/paths.ts";

/** AGENT_SESSIONS_YAML if set (relative to the cwd), else <workspace>/.mam/agent-sessions.yaml */
export function registryPath(workspace: string, env: Env = process.env): string {
  const o = env.AGENT_SESSIONS_YAML;
  if (o !== undefined && o !== "") return resolve(o);
  return join(mamDir(workspace), "agent-sessions.yaml");
}

/** the flock target for every read-modify-write: agent-sessions.lock next to the yaml */
export function registryLockPath(yamlPath: string): string {
  return join(dirname(yamlPath), "agent-sessions.lock");
}

/** the previous version, written before every replace */
export function registryBackupPath(yamlPath: string): string {
  return `${yamlPath}.bak`;
}


// mam skills install: the SKILL.md playbooks agents read (SPEC §8)
import { sha256Hex } from "../sys/digest.ts";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { SKILLS } from "../assets/skills.ts";
import { resolveWorkspace } from "../sys/paths.ts";
import { err, out, outJson } from "../sys/io.ts";
import { bool, defineCommand, jsonArg, str, workspaceArg } from "./command.ts";

const MANIFEST = ".mam-skills.json";
const sha = (s: string) => sha256Hex(s);

type Outcome = "written" | "updated" | "unchanged" | "kept (edited by you; --force overwrites)";

function writeAtomic(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o644 });
  renameSync(tmp, path);
}

/** install every skill under root/<name>/SKILL.md; files mam did not write are kept unless force */
export function installSkills(root: string, force: boolean): Record<string, Outcome> {
  mkdirSync(root, { recursive: true });
  const manifestPath = join(root, MANIFEST);
  let manifest: Record<string, string> = {};
  try {
    manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  } catch {}
  const result: Record<string, Outcome> = {};
  for (const [name, text] of Object.entries(SKILLS)) {
    const dir = join(root, name);
    const file = join(dir, "SKILL.md");
    mkdirSync(dir, { recursive: true });
    if (!existsSync(file)) {
      writeAtomic(file, text);
      result[name] = "written";
    } else {
      const current = readFileSync(file, "utf8");
      if (current === text) result[name] = "unchanged";
      else if (force || manifest[name] === sha(current)) {
        writeAtomic(file, text);
        result[name] = "updated";
      } else {
        result[name] = "kept (edited by you; --force overwrites)";
        continue;
      }
    }
    manifest[name] = sha(text);
  }
  writeAtomic(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  return result;
}

export default defineCommand({
  meta: {
    name: "skills",
    description: "install the mam SKILL.md playbooks for agents",
    examples: ["mam skills install", "mam skills install --claude   # also under .claude/skills/", "mam skills install --force    # overwrite files you edited"],
  },
  subCommands: {
    install: defineCommand({
      meta: {
        name: "install",
        description: "write SKILL.md for create, stop, resume, status, monitor and delegate-job under .agents/skills/ (idempotent; never overwrites your edits unless --force)",
        examples: ["mam skills install", "mam skills install --workspace ~/src/api --claude"],
      },
      args: {
        ...workspaceArg,
        claude: { type: "boolean", description: "also write them under .claude/skills/" },
        force: { type: "boolean", description: "overwrite skill files you edited" },
        ...jsonArg,
      },
      run({ args }) {
        const ws = resolveWorkspace(str(args, "workspace"));
        const roots = [join(ws, ".agents", "skills"), ...(bool(args, "claude") ? [join(ws, ".claude", "skills")] : [])];
        const report: Record<string, Record<string, Outcome>> = {};
        for (const root of roots) report[root] = installSkills(root, bool(args, "force"));
        if (bool(args, "json")) {
          outJson({ workspace: ws, installed: report });
          return;
        }
        for (const [root, items] of Object.entries(report)) {
          for (const [name, what] of Object.entries(items)) {
            const line = `${relative(ws, join(root, name, "SKILL.md"))}: ${what}`;
            if (what.startsWith("kept")) err(`WARNING: ${line}`);
            else out(line);
          }
        }
      },
    }),
  },
});

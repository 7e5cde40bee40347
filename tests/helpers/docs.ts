// Reading the documentation as tests see it (contract in CONTRIBUTING.md, "Examples that run"):
//   runnableBlocks(md)    the fenced blocks marked `runnable`: ```console runnable (a transcript:
//                         `$ ` lines are commands, the lines under one are its shown output) and
//                         ```sh runnable (a script; must exit 0, output not shown)
//   outputMatches(w, g)   shown output against real output: lines compared without trailing
//                         blanks; `…` in a line matches any text, a line that is only `…` any
//                         number of lines
//   localLinks(md)        relative links outside code, as {target, anchor}
//   headings(md)          the headings outside code
//   headingAnchors(md)    the anchors GitHub gives the headings of a file
import { dirname, join } from "node:path";

export interface Step {
  /** the command, as typed after `$ ` (continuation lines ending in `\` joined) */
  cmd: string;
  /** the shown output lines; none shown = not checked */
  shown: string[];
}

export interface Block {
  /** 1-based line of the opening fence */
  line: number;
  kind: "console" | "sh";
  steps: Step[];
  /** sh blocks: the script */
  script: string;
}

const FENCE = /^(\s*)(```+|~~~+)\s*(.*)$/;

/** fenced code blocks: [info string, 1-based line of the fence, body lines] */
export function fencedBlocks(md: string): { info: string; line: number; body: string[] }[] {
  const lines = md.split("\n");
  const out: { info: string; line: number; body: string[] }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = FENCE.exec(lines[i]!);
    if (!m) continue;
    const fence = m[2]!;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !lines[j]!.trimStart().startsWith(fence)) body.push(lines[j++]!);
    out.push({ info: m[3]!.trim(), line: i + 1, body });
    i = j;
  }
  return out;
}

export function runnableBlocks(md: string): Block[] {
  const blocks: Block[] = [];
  for (const b of fencedBlocks(md)) {
    const words = b.info.split(/\s+/);
    if (!words.includes("runnable")) continue;
    if (words[0] === "sh" || words[0] === "bash") {
      blocks.push({ line: b.line, kind: "sh", steps: [], script: b.body.join("\n") });
      continue;
    }
    if (words[0] !== "console") throw new Error(`line ${b.line}: a runnable block is \`console runnable\` or \`sh runnable\`, not '${b.info}'`);
    const steps: Step[] = [];
    for (let k = 0; k < b.body.length; k++) {
      const l = b.body[k]!;
      if (l.startsWith("$ ")) {
        let cmd = l.slice(2);
        while (cmd.endsWith("\\") && k + 1 < b.body.length) cmd = `${cmd}\n${b.body[++k]!}`;
        steps.push({ cmd, shown: [] });
      } else if (steps.length === 0) {
        if (l.trim() !== "") throw new Error(`line ${b.line + 1 + k}: output before the first \`$ \` command`);
      } else steps[steps.length - 1]!.shown.push(l);
    }
    for (const s of steps) while (s.shown.length && s.shown[s.shown.length - 1]!.trim() === "") s.shown.pop();
    blocks.push({ line: b.line, kind: "console", steps, script: "" });
  }
  return blocks;
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** does the real output show what the docs show? */
export function outputMatches(shown: string[], got: string): boolean {
  const lines = got.replace(/\n$/, "").split("\n").map((l) => l.trimEnd());
  const want = shown.map((l) => l.trimEnd());
  const lineRe = want.map((w) => (w === "…" ? null : new RegExp(`^${w.split("…").map(esc).join(".*")}$`)));
  // i: position in want, j: position in lines; `…` lines may swallow any number of lines
  const memo = new Map<string, boolean>();
  const go = (i: number, j: number): boolean => {
    const key = `${i},${j}`;
    const hit = memo.get(key);
    if (hit !== undefined) return hit;
    let r: boolean;
    if (i === want.length) r = j === lines.length;
    else if (lineRe[i] === null) r = go(i + 1, j) || (j < lines.length && go(i, j + 1));
    else r = j < lines.length && lineRe[i]!.test(lines[j]!) && go(i + 1, j + 1);
    memo.set(key, r);
    return r;
  };
  return go(0, 0);
}

/** the text outside fenced blocks (and outside inline code unless keepCode) */
function prose(md: string, keepCode = false): string {
  const lines = md.split("\n");
  let fence: string | null = null;
  const keep: string[] = [];
  for (const l of lines) {
    const m = FENCE.exec(l);
    if (m && (fence === null || l.trimStart().startsWith(fence))) {
      fence = fence === null ? m[2]! : null;
      keep.push("");
      continue;
    }
    keep.push(fence === null ? (keepCode ? l : l.replace(/`[^`]*`/g, "")) : "");
  }
  return keep.join("\n");
}

export interface Link {
  target: string;
  anchor?: string;
  line: number;
}

/** relative links ([text](target#anchor), <a href>) outside code; external ones are left out */
export function localLinks(md: string): Link[] {
  const links: Link[] = [];
  prose(md).split("\n").forEach((l, i) => {
    for (const m of l.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)|href="([^"]+)"/g)) {
      const href = m[1] ?? m[2]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue; // https:, mailto:, …
      const [target, anchor] = href.split("#", 2) as [string, string | undefined];
      links.push({ target, anchor, line: i + 1 });
    }
  });
  return links;
}

/** the headings of a file (outside code), as written */
export function headings(md: string): string[] {
  return prose(md, true).split("\n").flatMap((l) => {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(l);
    return m ? [m[1]!] : [];
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to -, repeats get -1, -2 */
export function headingAnchors(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const h of headings(md)) {
    const base = h.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  // explicit anchors: <a id="x"></a>
  for (const m of md.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1]!);
  return out;
}

/** the file a link points to, from the file it is in */
export const linkPath = (from: string, target: string) => (target === "" ? from : join(dirname(from), target));

// Naming an input field in a message: code below the front doors writes `{{field}}` (or
// `{{field=value}}`) where it means "the option you gave", and each front door spells it its own
// way: `--brief-file`, `--hard` or `NAME` on the command line, `brief_file` for MCP.
/**
 * `{{name}}`: an input field named in a message, `{{name=value}}` the field set to a value; the
 * front door spells it (`--name`, `--hard`, `name`, `NAME`)
 */
export const field = (name: string, value?: string): string => (value === undefined ? `{{${name}}}` : `{{${name}=${value}}}`);

/** the field references in a text, spelled by `spell` */
export function spellFields(text: string, spell: (field: string, value?: string) => string): string {
  return text.replace(/\{\{([a-z][a-z0-9_]*)(?:=([^{}]*))?\}\}/g, (_m, f: string, v: string | undefined) => spell(f, v));
}

/**
 * how the command line spells a field no op's flags rename: `--name`, `--name value` (what an
 * ERROR line says when no front door spelled it: a plumbing command's, mam.ts's last resort)
 */
export const cliSpelling = (f: string, v?: string): string => `--${f.replace(/_/g, "-")}${v === undefined || v === "true" ? "" : ` ${v}`}`;

/** how a text reads outside the command line: `name`, `name "value"` */
export const plainSpelling = (f: string, v?: string): string => (v === undefined ? f : `${f} ${JSON.stringify(v)}`);

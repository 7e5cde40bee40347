// Validation of every name that ends up in a path, an argv or a file (SPEC §1).
import { usageError } from "./errors.ts";

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const JOB_ID_RE = /^[0-9a-f]{8}$/;

export function isValidName(s: string): boolean {
  return NAME_RE.test(s) && s !== "." && s !== "..";
}

/** throws a usage error (exit 2) unless s is a valid session / server name */
export function checkName(s: string, what: string): string {
  if (!isValidName(s)) {
    const shown = s.length > 80 ? `${s.slice(0, 80)}…` : s;
    throw usageError(
      `invalid ${what} '${shown}'`,
      "names are 1-64 characters of [A-Za-z0-9._-], starting with a letter or digit",
    );
  }
  return s;
}

export function isValidJobId(s: string): boolean {
  return JOB_ID_RE.test(s);
}

export function checkJobId(s: string): string {
  if (!isValidJobId(s)) throw usageError(`invalid job id '${s.slice(0, 80)}'`, "job ids are 8 lowercase hex digits");
  return s;
}

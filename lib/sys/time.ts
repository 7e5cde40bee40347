// Time stamps in files: UTC YYYY-MM-DDTHH:MM:SSZ plus epoch seconds (SPEC §1).

export function epochNow(): number {
  return Math.floor(Date.now() / 1000);
}

export function isoUtc(epochSeconds: number = epochNow()): string {
  return new Date(epochSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** log-line time stamp with milliseconds, for long-running processes */
export function logStamp(d: Date = new Date()): string {
  return d.toISOString();
}


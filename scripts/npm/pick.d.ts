// Types of pick.js (plain CommonJS, shipped in the npm package multi-agent-mux)
export interface Machine {
  platform: string;
  arch: string;
  libc?: string;
  avx2?: boolean;
}
declare const pick: {
  SCOPE: string;
  PACKAGES: Record<string, { os: string; cpu: string; libc?: string; what: string }>;
  detect(): Machine;
  detectLibc(): string | undefined;
  detectAvx2(): boolean | undefined;
  candidates(m: Machine): { list: string[]; reason?: string };
  describe(m: Machine): string;
  noBinaryMessage(m: Machine, list: string[], reason?: string): string;
  installedBinary(name: string, from: string): string | undefined;
};
export default pick;

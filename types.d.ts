// Constants defined at build time by scripts/build.ts (absent when running from source).
declare const MAM_VERSION: string;
declare const MAM_COMMIT: string;
/** the Bun version that built the binary */
declare const MAM_BUN: string;
/** the build target, e.g. bun-linux-x64-baseline */
declare const MAM_TARGET: string;

declare module "*.md" {
  const text: string;
  export default text;
}
declare module "*.sh" {
  const text: string;
  export default text;
}
// the dashboard's style (lib/ui/assets), embedded as text (its page: a cast in lib/ui/server.ts,
// bun-types declares .html imports as bundles; its script: lib/ui/assets/app.d.ts)
declare module "*.css" {
  const text: string;
  export default text;
}

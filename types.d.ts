// Constants defined at build time by scripts/build.ts (absent when running from source).
declare const MAM_VERSION: string;
declare const MAM_COMMIT: string;

declare module "*.md" {
  const text: string;
  export default text;
}
declare module "*.sh" {
  const text: string;
  export default text;
}

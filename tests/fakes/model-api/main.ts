// Run the scripted model endpoint by hand: `bun tests/fakes/model-api/main.ts [PORT] [LOG]`.
// Script: the job worker (a mam job text → its started and completed commands; else "ready").
// Prints the URL; each request is appended to LOG (JSON lines) when given.
import { appendFileSync } from "node:fs";
import { jobWorker } from "./scripts.ts";
import { startModelApi } from "./server.ts";

const [port, log] = process.argv.slice(2);
const worker = jobWorker();
const api = startModelApi((t) => {
  const r = worker(t);
  if (log) appendFileSync(log, `${JSON.stringify({ turn: t, reply: r })}\n`);
  return r;
}, port ? Number(port) : 0);
console.log(api.url);

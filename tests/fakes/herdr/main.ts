#!/usr/bin/env bun
// The fake herdr executable: `herdr [--session NAME] server` runs the fake server in the
// foreground; every other command is the CLI (tests/fakes/herdr/README.md).
import { main } from "./cli/main.ts";

const code = await main(process.argv.slice(2));
process.exit(code);

// Notifications, the pure parts (docs/notifications.md): what `mam notify` shows of a sink.
import { expect, test } from "bun:test";
import { redacted } from "../../lib/notify/config.ts";

test("a command sink is shown without its secrets: VAR=value assignments keep only their names (review N1, B8)", () => {
  const shown = (command: string) => redacted({ id: "1", on: ["dialog"], type: "command", command });
  expect(shown("SLACK_TOKEN=xoxb-1 x.sh")).toBe("SLACK_TOKEN=… x.sh …");
  expect(shown("  A=1 B='two words' notify.sh --to me")).toBe("A=… B=… notify.sh …");
  expect(shown("env TOKEN=s3cr3t curl -d @- https://x")).toBe("env TOKEN=… curl …");
  expect(shown("cat > /tmp/x # tk")).toBe("cat …");
  expect(shown("logger -t mam")).toBe("logger …");
  // a program that looks like a secret is not shown either
  expect(shown("xoxb-123456789-abcdefghijklmnop")).toBe("… …");
  expect(shown("https://user:pw@example.com/hook")).toBe("… …");
  for (const c of ["SLACK_TOKEN=xoxb-SECRET1 x.sh", "env K=xoxb-SECRET1 x.sh", "xoxb-SECRET1", "A=1 xoxb-SECRET1"]) expect(shown(c)).not.toContain("SECRET1");
});

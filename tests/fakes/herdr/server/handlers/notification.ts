// notification.show (real 0.8.0: src/app/api.rs:1176-1245, src/cli/notification.rs): title cut
// to 80 characters and body to 240 after sanitising (an empty title → invalid_params); delivery
// from the config, `[ui.toast] delivery = "off"` by default → `shown:false, reason:"disabled"`.
// FAKE_HERDR_TOAST_DELIVERY=herdr models a user who turned in-app toasts on: one per second per
// server (`rate_limited`), none while one shows (`busy`, a toast shows for TOAST_MS). Every
// request is kept in `fake.state` → notifications, shown or not, for tests.
import type { MethodDef } from "../context.ts";
import type { FakeHerdr } from "../core.ts";
import { ApiError } from "../model.ts";

const RATE_LIMIT_MS = 1000;
const TOAST_MS = 1500;

/** control characters become spaces, runs of spaces one, trimmed, cut to max characters */
export function sanitizeNotice(text: string, max: number): string | undefined {
  const t = text.replace(/[\u0000-\u001f\u007f]+/g, " ").replace(/\s+/g, " ").trim();
  if (t === "") return undefined;
  return [...t].slice(0, max).join("");
}

export interface NoticeRecord {
  at: number;
  title: string;
  body?: string;
  shown: boolean;
  reason: string;
}

export const notificationMethods: Record<string, MethodDef> = {
  "notification.show": {
    run: (h: FakeHerdr, p) => {
      const title = sanitizeNotice(String(p.title ?? ""), 80);
      if (title === undefined) throw new ApiError("invalid_params", "notification title is empty");
      const body = typeof p.body === "string" ? sanitizeNotice(p.body, 240) : undefined;
      const now = Date.now();
      let reason = "disabled";
      if (h.cfg.toastDelivery === "herdr") {
        const last = h.notices.findLast((n) => n.shown);
        if (last && now - last.at < TOAST_MS) reason = "busy";
        else if (last && now - last.at < RATE_LIMIT_MS) reason = "rate_limited";
        else reason = "shown";
      }
      const shown = reason === "shown";
      h.notices.push({ at: now, title, ...(body !== undefined ? { body } : {}), shown, reason });
      return { type: "notification_show", shown, reason };
    },
  },
};

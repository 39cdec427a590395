/**
 * axe scans that take seconds, not a minute, on a busy 2-core machine: a full
 * events page is 100 rows of six links each, and a poll that replaces them mid-scan
 * makes axe start over on new nodes.
 */
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";

/**
 * Holds the page still for the scan: live views stop polling while the tab is
 * hidden (refetchIntervalInBackground: false). Call it last in a test, or where
 * nothing after it needs the page to poll.
 */
export async function pauseLiveUpdates(page: Page): Promise<void> {
  await page.evaluate(() => {
    Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "hidden" });
    document.dispatchEvent(new Event("visibilitychange", { bubbles: true }));
  });
}

/** axe over the page, with the rows of each table sampled: they are built alike, so the first five stand for the rest. */
export function scopedAxe(page: Page): AxeBuilder {
  return (
    new AxeBuilder({ page })
      // A tooltip is only there while hovered; what it says is in each chart's announced readout.
      .exclude(".recharts-tooltip-wrapper")
      .exclude("tbody tr:nth-child(n+6)")
  );
}

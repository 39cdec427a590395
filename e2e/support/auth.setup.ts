import { mkdirSync } from "node:fs";
import { expect, test as setup } from "@playwright/test";
import { AUTH_DIR, OPERATOR_STATE, VIEWER_STATE } from "./harness";
import { signInThroughIdp } from "./sign-in";

/** Signs alice (operator) and bob (viewer) in through the real IdP once; the role projects reuse their cookies. */
mkdirSync(AUTH_DIR, { recursive: true });

for (const [user, role, file] of [
  ["alice", "operator", OPERATOR_STATE],
  ["bob", "viewer", VIEWER_STATE],
] as const) {
  setup(`sign in as ${user} (${role})`, async ({ page }) => {
    await signInThroughIdp(page, user);
    await expect(page.getByTestId("user-name")).toHaveText(user);
    await expect(page.getByTestId("user-role")).toHaveText(role);
    await page.context().storageState({ path: file });
  });
}

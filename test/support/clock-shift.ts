import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * Builds test/support/clock-shift.c into a temp dir every user can read (PostgreSQL runs
 * as `postgres`) and returns the library's path, for LD_PRELOAD with CLOCK_SHIFT_SECONDS
 * and CLOCK_SHIFT_RATE.
 */
export function buildClockShim(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "lw-clock-"));
  chmodSync(dir, 0o755);
  const shim = path.join(dir, "clock-shift.so");
  execFileSync("cc", ["-shared", "-fPIC", "-O2", "-o", shim, path.join(import.meta.dirname, "clock-shift.c")], { stdio: "inherit" });
  chmodSync(shim, 0o755);
  return shim;
}

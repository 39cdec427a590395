/** Who may force-release here (display only; the routes re-check): `canForceRelease`, or the reason they may not. */
export type ForceReleaseAccess = { canForceRelease: true } | { canForceRelease: false; reason: string };

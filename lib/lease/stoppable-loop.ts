/**
 * Runs `round` again and again, `intervalMs` apart (counted from the end of a round), until
 * `stop()`: the wait is cut short, a round in progress finishes first, and then `done` resolves.
 */
export function repeatUntilStopped(round: () => Promise<void>, intervalMs: number): { stop: () => void; done: Promise<void> } {
  let isStopping = false;
  let wake: (() => void) | undefined;
  const loop = async () => {
    while (!isStopping) {
      await round();
      if (isStopping) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, intervalMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  };
  return {
    stop: () => {
      isStopping = true;
      wake?.();
    },
    done: loop(),
  };
}

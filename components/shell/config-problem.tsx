/**
 * Shown instead of the console when its configuration is wrong. What is wrong is in
 * the server log (and was printed at start-up); the page gives the reference to find it.
 */
export function ConfigProblem({ correlationId }: { correlationId: string }) {
  return (
    <main id="main" className="mx-auto max-w-2xl px-6 py-16">
      <h1 className="text-xl font-semibold">Leasewatch is not configured correctly</h1>
      <p className="mt-3 text-sm text-zinc-600 dark:text-zinc-400">
        The console cannot start until its environment is fixed. The server log says what is wrong; look for this reference:
      </p>
      <p className="mt-4 rounded-lg border border-red-300 bg-red-50 p-4 font-mono text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100">
        {correlationId}
      </p>
    </main>
  );
}

/** Shown instead of the console when its configuration is wrong: what is wrong and what to fix, no stack trace. */
export function ConfigProblem({ message }: { message: string }) {
  return (
    <main id="main" className="mx-auto max-w-2xl px-6 py-16">
      <h1 className="text-xl font-semibold">Leasewatch is not configured correctly</h1>
      <p className="mt-3 text-sm text-zinc-600 dark:text-zinc-400">
        The console cannot start until this is fixed in its environment:
      </p>
      <pre className="mt-4 whitespace-pre-wrap rounded-lg border border-red-300 bg-red-50 p-4 font-mono text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100">
        {message}
      </pre>
    </main>
  );
}

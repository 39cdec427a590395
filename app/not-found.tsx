import Link from "next/link";

/**
 * No such page, or a lease outside what this account may see: the same answer
 * for both, so a resource's existence never shows through.
 */
export default function NotFound() {
  return (
    <div className="mx-auto max-w-xl rounded-lg border border-zinc-200 bg-white p-5 text-sm dark:border-zinc-800 dark:bg-zinc-900">
      <h1 className="text-base font-semibold">Not found</h1>
      <p className="mt-2 text-zinc-700 dark:text-zinc-300">There is nothing here that your account can see. Check the address, or find the lease from the list.</p>
      <Link href="/locks" className="mt-4 inline-block font-medium text-sky-700 underline underline-offset-2 hover:text-sky-900 dark:text-sky-300 dark:hover:text-sky-100">
        Go to the leases
      </Link>
    </div>
  );
}

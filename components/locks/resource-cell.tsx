import Link from "next/link";
import { Td } from "@/components/ui/data-table";
import { leaseHref } from "@/lib/console/shared/links";

/** A table cell naming a resource, linked to its lease page; `className` sets its width (the name truncates, the full one is its title). */
export function ResourceCell({ store, resource, className }: { store: string; resource: string; className: string }) {
  return (
    <Td mono className={`${className} truncate`} title={resource}>
      <Link href={leaseHref(store, resource)} className="text-sky-700 underline-offset-4 hover:underline dark:text-sky-300">
        {resource}
      </Link>
    </Td>
  );
}

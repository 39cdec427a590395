import { ListPageSkeleton } from "@/components/ui/skeleton";

export default function AuditLoading() {
  return <ListPageSkeleton heading="h-10 w-96" filters="h-16 w-full" rows={12} columns={9} label="Loading the audit log" />;
}

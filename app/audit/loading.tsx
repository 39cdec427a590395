import { Skeleton, SkeletonRows } from "@/components/ui/skeleton";

export default function AuditLoading() {
  return (
    <div className="space-y-4">
      <Skeleton className="h-10 w-96" />
      <Skeleton className="h-16 w-full" />
      <SkeletonRows rows={12} columns={9} label="Loading the audit log" />
    </div>
  );
}

import { ListPageSkeleton } from "@/components/ui/skeleton";

export default function LeasesLoading() {
  return <ListPageSkeleton heading="h-6 w-32" filters="h-16 w-full" rows={12} columns={8} label="Loading leases" />;
}

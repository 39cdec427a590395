import { ListPageSkeleton } from "@/components/ui/skeleton";

export default function EventsLoading() {
  return <ListPageSkeleton heading="h-6 w-32" filters="h-28 w-full" rows={14} columns={8} label="Loading events" />;
}

import { ListPageSkeleton } from "@/components/ui/skeleton";

export default function AdviceLoading() {
  return <ListPageSkeleton heading="h-6 w-32" filters="h-16 w-full" rows={8} columns={9} label="Loading TTL advice" />;
}

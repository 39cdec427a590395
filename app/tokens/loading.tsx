import { ListPageSkeleton } from "@/components/ui/skeleton";

export default function TokensLoading() {
  return <ListPageSkeleton heading="h-10 w-96" rows={6} columns={8} label="Loading the API tokens" />;
}

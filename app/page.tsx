export default function OverviewPage() {
  return (
    <main className="p-6">
      <h1 className="text-xl font-semibold">Leasewatch</h1>
    </main>
  );
}

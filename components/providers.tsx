"use client";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { useState } from "react";

/**
 * One QueryClient per browser tab. Polling pauses while the tab is hidden
 * (refetchIntervalInBackground: false) and previous data stays on screen while
 * a refetch runs, so live views never flash or jump.
 */
export function Providers({ children }: { children: React.ReactNode }) {
  const [client] = useState(
    () =>
      new QueryClient({
        defaultOptions: {
          queries: {
            refetchIntervalInBackground: false,
            refetchOnWindowFocus: true,
            staleTime: 2_000,
            retry: 1,
            placeholderData: (previous: unknown) => previous,
          },
        },
      }),
  );
  return <QueryClientProvider client={client}>{children}</QueryClientProvider>;
}

/** The product mark: a padlock (leases are locks with a clock). Decorative; the name is always shown beside it. */
export function LogoMark({ className = "size-5" }: { className?: string }) {
  return (
    <svg aria-hidden="true" viewBox="0 0 20 20" className={`${className} text-emerald-600 dark:text-emerald-400`}>
      <rect x="3" y="8" width="14" height="10" rx="2" fill="currentColor" />
      <path d="M6 8V6a4 4 0 0 1 8 0v2" fill="none" stroke="currentColor" strokeWidth="2" />
      <path d="M10 11v4" stroke="white" strokeWidth="1.8" strokeLinecap="round" />
    </svg>
  );
}

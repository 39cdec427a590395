import { cx } from "./cx";
import { TONE_CLASSES, type Tone } from "./badge";

const DOT_CLASSES: Record<Tone, string> = {
  neutral: "bg-zinc-400",
  green: "bg-emerald-500",
  amber: "bg-amber-500",
  red: "bg-red-500",
  blue: "bg-sky-500",
  violet: "bg-violet-500",
};

/**
 * A status with a coloured dot AND its name in words ("up", "expired", "overdue"),
 * so it reads the same without colour. `detail` adds quieter context ("2 ms").
 */
export function StatusPill({
  tone,
  label,
  detail,
  title,
  className,
}: {
  tone: Tone;
  label: string;
  detail?: string;
  title?: string;
  className?: string;
}) {
  return (
    <span
      title={title}
      className={cx(
        "inline-flex items-center gap-1.5 whitespace-nowrap rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset",
        TONE_CLASSES[tone],
        className,
      )}
    >
      <span aria-hidden="true" className={cx("size-2 rounded-full", DOT_CLASSES[tone])} />
      <span>{label}</span>
      {detail ? <span className="font-normal">{detail}</span> : null}
    </span>
  );
}

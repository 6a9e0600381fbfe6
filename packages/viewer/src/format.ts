/** `12ms`, `1.4s`, `2m03s`, `1h05m`. */
export function formatDuration(ms: number): string {
  const value = Math.max(0, Math.round(ms));
  if (value < 1_000) return `${value}ms`;
  if (value < 60_000) return `${(value / 1_000).toFixed(1)}s`;
  const seconds = Math.floor(value / 1_000);
  if (seconds < 3_600) return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, "0")}s`;
  const minutes = Math.floor(seconds / 60);
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}

/** `5s ago`, `3m ago`, `2h ago`, `4d ago`. */
export function formatAge(at: number, now: number): string {
  const seconds = Math.max(0, Math.round((now - at) / 1_000));
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3_600) return `${Math.floor(seconds / 60)}m ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3_600)}h ago`;
  return `${Math.floor(seconds / 86_400)}d ago`;
}

/**
 * What is left of a running step's saved deadline: `4m12s left`, `past its deadline`; "" without one.
 * Without `now` (a live line that is not redrawn every second) it names the local clock time instead:
 * `due 14:05:09`.
 */
export function formatTimeLeft(deadlineAt: number | null | undefined, now: number | undefined): string {
  if (deadlineAt === null || deadlineAt === undefined) return "";
  if (now === undefined) {
    const at = new Date(deadlineAt);
    const two = (n: number) => String(n).padStart(2, "0");
    return `due ${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())}`;
  }
  return deadlineAt > now ? `${formatDuration(deadlineAt - now)} left` : "past its deadline";
}

import { isProcessAlive } from "@piw/state-dir";

/** Whether a process with this PID still runs: a zombie nobody reaped has ended (the host's own rule). */
export function isAlive(pid: number): boolean {
  return isProcessAlive(pid);
}

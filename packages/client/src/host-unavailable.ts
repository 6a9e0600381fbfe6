/** Why no host could be reached; `not_running` is the only one a caller may cure by starting a host. */
export type HostUnavailableReason =
  | "not_running" // nothing listens on the socket and auto-start was off
  | "start_failed" // the host command could not be run, or exited before it answered
  | "timeout" // a host was started but did not answer in time
  | "refused" // the socket exists but connecting was refused for another reason (permissions, path)
  | "untrusted" // the state directory or socket is not this user's own; nothing was sent
  | "disconnected"; // the host closed the connection

/** No host answered on `socketPath`. Carries the socket path so the message can say where it looked. */
export class HostUnavailable extends Error {
  override readonly name = "HostUnavailable";
  constructor(
    readonly socketPath: string,
    readonly reason: HostUnavailableReason,
    detail: string,
  ) {
    super(`no host at ${socketPath}: ${detail}`);
  }
}

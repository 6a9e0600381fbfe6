import { checkPiSdkDir } from "@piw/state-dir";

/**
 * Where Pi's SDK is, as the Pi processes connected to this host reported it: a Pi that installed piw
 * with `pi install` holds the SDK in its own install, where piw's worker cannot resolve it. Only an
 * extension client reports it, over the user's own socket, from its own process (never from a model's
 * or a user's arguments); the host keeps the latest report that passes `checkPiSdkDir`, and checks
 * the folder again before each launch hands it on (it may have gone or changed since).
 */
export class PiSdkLocation {
  private dir: string | undefined;

  constructor(private readonly log: (line: string) => void) {}

  /** A connected Pi's report: kept when the folder passes the check, else logged and dropped. */
  report(dir: string): void {
    const check = checkPiSdkDir(dir);
    if (!check.ok) {
      this.log(`a Pi client's SDK folder was refused (${check.refusal}); isolated steps cannot use it`);
      return;
    }
    if (this.dir !== check.dir) this.log("a Pi client reported its SDK folder; workers may load it");
    this.dir = check.dir;
  }

  /** The entry file to give a worker now, or undefined when no usable report is known. */
  entry(): string | undefined {
    if (this.dir === undefined) return undefined;
    const check = checkPiSdkDir(this.dir);
    if (check.ok) return check.entry;
    this.log(`the reported Pi SDK folder is no longer usable (${check.refusal}); it is forgotten`);
    this.dir = undefined;
    return undefined;
  }
}

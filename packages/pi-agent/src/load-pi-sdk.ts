import { pathToFileURL } from "node:url";

/** Pi's SDK, as this package uses it. */
export type PiSdk = typeof import("@earendil-works/pi-coding-agent");

/** The package that carries Pi's SDK. */
const PI_SDK_PACKAGE = "@earendil-works/pi-coding-agent";

/**
 * Where to load Pi's SDK from when it is not installed beside piw (a global `npm i -g piw` next to a
 * separately installed Pi): the path of the package's folder or of its entry file.
 */
const PI_SDK_ENV = "PIW_PI_SDK";

/** Pi's SDK could not be loaded: isolated agent steps need it; nothing else does. */
export class PiSdkMissing extends Error {
  readonly code = "pi_sdk_missing";
  constructor() {
    super(
      `Isolated agent steps need Pi's SDK (${PI_SDK_PACKAGE} 1.6 or newer), which could not be loaded: ` +
        `install it beside piw (npm i -g ${PI_SDK_PACKAGE}) or set ${PI_SDK_ENV} to its folder.`,
    );
    this.name = "PiSdkMissing";
  }
}

let loading: Promise<PiSdk> | undefined;

function entryOf(location: string): string {
  const url = pathToFileURL(location).href;
  return location.endsWith(".js") ? url : `${url.replace(/\/$/, "")}/dist/index.js`;
}

/**
 * Loads Pi's SDK once, on the first isolated step: a process that runs none never loads it, so piw
 * works without Pi for workflows without isolated steps. Rejects with `PiSdkMissing` when it is absent.
 */
export function loadPiSdk(env: NodeJS.ProcessEnv = process.env): Promise<PiSdk> {
  loading ??= (async () => {
    const override = env[PI_SDK_ENV];
    try {
      return override ? ((await import(entryOf(override))) as PiSdk) : await import(PI_SDK_PACKAGE);
    } catch {
      loading = undefined;
      throw new PiSdkMissing();
    }
  })();
  return loading;
}

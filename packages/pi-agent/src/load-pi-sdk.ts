import { pathToFileURL } from "node:url";
import { PIW_ENV } from "@piw/state-dir";

/** Pi's SDK, as this package uses it. */
export type PiSdk = typeof import("@earendil-works/pi-coding-agent");

/** The package that carries Pi's SDK. */
const PI_SDK_PACKAGE = "@earendil-works/pi-coding-agent";

/**
 * Where to load Pi's SDK from, set by hand, when neither a connected Pi reported it nor it is
 * installed beside piw: the path of the package's folder or of its entry file.
 */
const PI_SDK_ENV = PIW_ENV.piSdk.name;

/** Pi's SDK could not be loaded: isolated agent steps need it; nothing else does. */
export class PiSdkMissing extends Error {
  readonly code = "pi_sdk_missing";
  constructor() {
    super(
      `Isolated agent steps need Pi's SDK (${PI_SDK_PACKAGE} 1.6 or newer), which could not be loaded: ` +
        `start the run from a Pi that has piw installed, install the SDK beside piw (npm i -g ${PI_SDK_PACKAGE}), ` +
        `or set ${PI_SDK_ENV} to its folder.`,
    );
    this.name = "PiSdkMissing";
  }
}

/** Where the SDK may come from besides the environment. */
export interface PiSdkSources {
  /**
   * The SDK's entry file as a connected Pi reported it: the host checked it (`checkPiSdkDir`) and
   * hands it to the worker with its run.
   */
  reportedEntry?: string | undefined;
}

let loading: Promise<PiSdk> | undefined;

function entryOf(location: string): string {
  const url = pathToFileURL(location).href;
  return location.endsWith(".js") ? url : `${url.replace(/\/$/, "")}/dist/index.js`;
}

/**
 * `PIW_PI_SDK` alone when set (the user's own choice); else the SDK the running Pi reported, then
 * piw's own install: the first that loads.
 */
async function importSdk(env: NodeJS.ProcessEnv, sources: PiSdkSources): Promise<PiSdk> {
  const override = env[PI_SDK_ENV];
  if (override) return (await import(entryOf(override))) as PiSdk;
  if (sources.reportedEntry !== undefined) {
    try {
      return (await import(pathToFileURL(sources.reportedEntry).href)) as PiSdk;
    } catch {
      // Gone since the host checked it: piw's own install may still have one.
    }
  }
  return await import(PI_SDK_PACKAGE);
}

/**
 * Loads Pi's SDK once, on the first isolated step: a process that runs none never loads it, so piw
 * works without Pi for workflows without isolated steps. Rejects with `PiSdkMissing` when it is absent.
 */
export function loadPiSdk(env: NodeJS.ProcessEnv = process.env, sources: PiSdkSources = {}): Promise<PiSdk> {
  loading ??= importSdk(env, sources).catch(() => {
    loading = undefined;
    throw new PiSdkMissing();
  });
  return loading;
}

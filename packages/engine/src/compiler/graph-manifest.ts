// The manifest schema is shared with the host and viewers, which never load workflow code.

export type { GraphManifest, ManifestTarget } from "@piw/protocol";
export { graphManifestSchema } from "@piw/protocol";

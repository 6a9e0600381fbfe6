// The manifest schema is shared with the host and viewers, which never load workflow code.
export { graphManifestSchema, manifestTargetSchema } from "@piw/protocol";
export type { GraphManifest, ManifestTarget } from "@piw/protocol";

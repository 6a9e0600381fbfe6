declare const nodeVisitBrand: unique symbol;
declare const effectBrand: unique symbol;

/**
 * A logical node visit (identity rule): the run, the full compiled path and the visit number of that
 * exact path. A crash retry of an unfinished visit keeps it; a later re-entry gets the next number.
 * Only the engine constructs one; the public entry exports the type, never the constructor.
 */
export type NodeVisitId = string & { readonly [nodeVisitBrand]: true };

/** A managed effect: its node visit, its type and its ordinal among that visit's effects. */
export type EffectId = string & { readonly [effectBrand]: true };

export interface NodeVisitParts {
  runId: string;
  path: string;
  visit: number;
}

export function nodeVisitId(parts: NodeVisitParts): NodeVisitId {
  return `${parts.runId}/${parts.path}#${parts.visit}` as NodeVisitId;
}

/**
 * The effect's identity never depends on a child workflow's projected view: the full path comes
 * from the compiled node, so two mounts of one action cannot collide.
 */
export function effectId(visit: NodeVisitId, effectType: string, ordinal: number): EffectId {
  return `${visit}/${encodeURIComponent(effectType)}/${ordinal}` as EffectId;
}

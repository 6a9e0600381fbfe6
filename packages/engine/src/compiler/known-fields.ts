/**
 * The fields of an authored object that are not in `known`. Every authoring object is a plain object
 * the compiler reads by name, so a field it does not read would be silently ignored: callers report
 * each as a compile problem instead.
 */
export function unknownFields(value: object, known: readonly string[]): string[] {
  return Object.keys(value).filter((field) => !known.includes(field));
}

/** A field name for a message: quoted and bounded, since it is the author's text. */
export function fieldName(field: string): string {
  return JSON.stringify(field.length > 60 ? `${field.slice(0, 60)}…` : field);
}

// The tools' input schemas, drawn from the interface's own OpenAPI document (the one the build
// generates from the app into src/client/openapi.json), never copied by hand: an operation's
// request body, or its path and query parameters gathered into one object schema.
import document from '../client/openapi.json' with { type: 'json' };

export type JsonSchema = { [key: string]: unknown };
export type ObjectSchema = { type: 'object'; properties: Record<string, JsonSchema>; required?: string[]; additionalProperties: false; [key: string]: unknown };

type Parameter = { in: string; name: string; required?: boolean; description?: string; schema: JsonSchema };
type Operation = { operationId?: string; parameters?: Parameter[]; requestBody?: { content: Record<string, { schema: JsonSchema }> } };

export type OpenApiDocument = { paths: Record<string, Record<string, Operation>> };

export const OPENAPI = document as unknown as OpenApiDocument;

/** The operation with this operationId, or null when the document has none (a route not built yet). */
export function operation(operationId: string, doc: OpenApiDocument = OPENAPI): Operation | null {
  for (const methods of Object.values(doc.paths)) {
    for (const op of Object.values(methods)) if (op.operationId === operationId) return op;
  }
  return null;
}

/** The operationId of `method path`, or null when the document does not describe it. */
export function operationIdAt(path: string, method: string, doc: OpenApiDocument = OPENAPI): string | null {
  return doc.paths[path]?.[method]?.operationId ?? null;
}

/** An operation's JSON request body schema. */
export function bodySchema(operationId: string, doc: OpenApiDocument = OPENAPI): ObjectSchema {
  const schema = operation(operationId, doc)?.requestBody?.content['application/json']?.schema;
  if (!schema || schema.type !== 'object') throw new Error(`the OpenAPI document has no JSON object body for ${operationId}`);
  return structuredClone(schema) as ObjectSchema;
}

/** An operation's path and query parameters (those named, or all) as one object schema. */
export function parametersSchema(operationId: string, names?: string[], doc: OpenApiDocument = OPENAPI): ObjectSchema {
  const params = (operation(operationId, doc)?.parameters ?? []).filter((p) => (p.in === 'path' || p.in === 'query') && (!names || names.includes(p.name)));
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const p of params) {
    properties[p.name] = { ...structuredClone(p.schema), ...(p.description ? { description: p.description } : {}) };
    // A parameter with a default is optional for the caller, whatever the document's `required` says.
    if (p.in === 'path' || (p.required && !('default' in p.schema))) required.push(p.name);
  }
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
}

/** The schema of one header parameter (e.g. Idempotency-Key), with its description. */
export function headerSchema(operationId: string, name: string, doc: OpenApiDocument = OPENAPI): JsonSchema {
  const p = operation(operationId, doc)?.parameters?.find((x) => x.in === 'header' && x.name.toLowerCase() === name.toLowerCase());
  if (!p) throw new Error(`the OpenAPI document has no header ${name} on ${operationId}`);
  return { ...structuredClone(p.schema), ...(p.description ? { description: p.description } : {}) };
}

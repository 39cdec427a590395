import SwaggerParser from "@apidevtools/swagger-parser";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiFixture, type ApiFixture } from "@/test/support/api-server";

let api: ApiFixture;
beforeAll(async () => {
  api = await startApiFixture();
});
afterAll(async () => {
  await api?.close();
});

type Json = Record<string, unknown>;

/** An example value for a JSON schema, from its `example`s (what a client generator would show). */
function exampleFor(schema: Json, components: Record<string, Json>): unknown {
  if (typeof schema.$ref === "string") return exampleFor(components[schema.$ref.split("/").pop() ?? ""] ?? {}, components);
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.type === "object") {
    const out: Json = {};
    const required = new Set((schema.required as string[] | undefined) ?? []);
    for (const [name, prop] of Object.entries((schema.properties as Record<string, Json> | undefined) ?? {})) {
      const value = exampleFor(prop, components);
      if (required.has(name) || value !== undefined) out[name] = value;
    }
    return out;
  }
  return undefined;
}

describe("GET /v1/openapi.json", () => {
  it("is a valid OpenAPI 3.1 document, and its acquire example succeeds against the server", async () => {
    const response = await fetch(`${api.url}/v1/openapi.json`);
    expect(response.status).toBe(200);
    const doc = (await response.json()) as Json;
    expect(doc.openapi).toBe("3.1.0");
    // validate() dereferences in place: keep the original for the example.
    await SwaggerParser.validate(structuredClone(doc) as never);

    const components = (doc.components as { schemas: Record<string, Json> }).schemas;
    const paths = doc.paths as Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Json }> } }>>;
    const acquireSchema = paths["/v1/locks/acquire"]?.post?.requestBody?.content["application/json"]?.schema;
    expect(acquireSchema).toBeDefined();
    const example = exampleFor(acquireSchema ?? {}, components) as Json;
    expect(example).toMatchObject({ resource: expect.any(String), ownerId: expect.any(String), task: expect.any(String), ttlMs: expect.any(Number) });

    const prefix = String(example.resource).split(":")[0] + ":";
    const token = await api.createToken({ prefixes: [prefix] });
    const body = { ...example, resource: `${String(example.resource)}:${randomUUID().slice(0, 6)}` };
    const acquired = await api.call(token, "POST", "/v1/locks/acquire", body);
    expect(acquired.status).toBe(200);
    expect(acquired.body.acquired).toBe(true);
    const released = await api.call(token, "DELETE", `/v1/locks/${String(acquired.body.leaseId)}`);
    expect(released.status).toBe(200);
  });
});

// Structured output with the OpenAI Node SDK: `response_format: {type: "json_schema", ...}` on chat
// completions, streamed and not, n = 4; every sample parses and validates with ajv (JSON Schema
// 2020-12; not zinfer's grammar). A schema zinfer cannot compile is the SDK's BadRequestError
// naming the field.
//
// The default model's weights are random: within what the grammar allows it picks nearly
// uniformly among 150k tokens, so a free string would rarely close. The requests bias the tokens
// that close strings, arrays and objects (a bias changes nothing where the grammar masks the
// token); what the output is remains the grammar's doing.
import { readFileSync } from "node:fs";
import path from "node:path";

import Ajv2020 from "ajv/dist/2020.js";

import { check, checkEqual, client, expectError, model, run } from "./common.mjs";

const vocab = JSON.parse(readFileSync(path.join(process.env.ZINFER_MODEL_DIR, "tokenizer.json"), "utf8")).model.vocab;
const bias = {};
for (const t of ['"', '"}', '"]', '",']) if (t in vocab) bias[vocab[t]] = 10;
for (const t of ["}", "]", "},", "],"]) if (t in vocab) bias[vocab[t]] = 4;

const ajv = new Ajv2020({ strict: true, allErrors: true });

const schemas = {
  weather: {
    type: "object",
    properties: {
      location: { type: "string", maxLength: 30 },
      unit: { enum: ["celsius", "fahrenheit"] },
      days: { type: "integer", minimum: 1, maximum: 14 },
    },
    required: ["location", "unit", "days"],
    additionalProperties: false,
  },
  order: {
    type: "object",
    $defs: { item: { type: "object", properties: { sku: { type: "string", pattern: "^[A-Z]{2}-\\d{3}$" }, qty: { type: "integer", minimum: 1, maximum: 9 } }, required: ["sku", "qty"], additionalProperties: false } },
    properties: {
      id: { type: "integer", minimum: 0 },
      items: { type: "array", items: { $ref: "#/$defs/item" }, minItems: 1, maxItems: 3 },
      gift: { anyOf: [{ type: "boolean" }, { type: "null" }] },
      note: { type: ["string", "null"], maxLength: 20 },
    },
    required: ["id", "items", "gift"],
    additionalProperties: false,
  },
};

function request(name, extra) {
  return {
    model,
    messages: [{ role: "user", content: `Give me a ${name} as JSON.` }],
    max_tokens: 400,
    n: 4,
    temperature: 1,
    seed: 7,
    logit_bias: bias,
    response_format: { type: "json_schema", json_schema: { name, schema: schemas[name], strict: true } },
    ...extra,
  };
}

function validate(name, text, what) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${what}: not JSON (${err.message}): ${JSON.stringify(text)}`);
  }
  const valid = ajv.validate(schemas[name], value);
  check(valid, `${what}: ${JSON.stringify(text)} does not validate: ${ajv.errorsText(ajv.errors)}`);
}

await run({
  async jsonSchemaNonStream() {
    for (const name of Object.keys(schemas)) {
      const r = await client.chat.completions.create(request(name, {}));
      checkEqual(r.choices.length, 4, `${name}: choices`);
      for (const c of r.choices) {
        checkEqual(c.finish_reason, "stop", `${name} choice ${c.index}: finish_reason (${c.message.content})`);
        validate(name, c.message.content, `${name} choice ${c.index}`);
      }
    }
  },
  async jsonSchemaStream() {
    for (const name of Object.keys(schemas)) {
      const stream = await client.chat.completions.create(request(name, { stream: true, seed: 8 }));
      const texts = ["", "", "", ""], finish = [null, null, null, null];
      for await (const chunk of stream) {
        for (const c of chunk.choices) {
          texts[c.index] += c.delta?.content ?? "";
          finish[c.index] = c.finish_reason ?? finish[c.index];
        }
      }
      texts.forEach((t, i) => {
        checkEqual(finish[i], "stop", `${name} stream choice ${i}: finish_reason (${t})`);
        validate(name, t, `${name} stream choice ${i}`);
      });
    }
  },
  async unsupportedKeywordIsABadRequest() {
    const err = await expectError(client.chat.completions.create({
      model, messages: [{ role: "user", content: "x" }], max_tokens: 5,
      response_format: { type: "json_schema", json_schema: { name: "bad", schema: { type: "object", not: { required: ["a"] } } } },
    }), 400, "a schema with 'not'");
    checkEqual(err.param, "response_format.json_schema.schema", "the field named");
    check(err.message.includes("'not'"), `the message names the keyword: ${err.message}`);
  },
});

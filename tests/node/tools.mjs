// Tool calling with the official OpenAI Node SDK (issue 19): forced calls ("required", a named
// function) always parse into arguments valid for the tool's schema (checked with ajv), streamed
// and not, n = 2; a history with tool calls and results renders exactly as the reference render
// (tests/data/chat_template/jinja2_ref, equal to transformers' apply_chat_template(tools=...));
// "auto" answers well-formed; bad tool fields are 400s naming the field.
// The model is the random-weight default (Qwen3 template, hermes parser) or a Llama-3 one
// (llama3_json); the schemas bound every string, number and list so that a random model's output
// ends within max_tokens.
import fs from "node:fs";
import path from "node:path";
import Ajv from "ajv";
import { check, checkEqual, client, expectError, model, run } from "./common.mjs";

const source = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", "..");
const conversations = JSON.parse(fs.readFileSync(path.join(source, "tests/data/chat_template/conversations.json"), "utf8"));
const references = (name) => fs.readFileSync(path.join(source, `tests/data/chat_template/jinja2_ref/${name}.jsonl`), "utf8")
  .split("\n").filter((l) => l).map((l) => JSON.parse(l));

const tools = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Current weather for a city.",
      parameters: {
        type: "object",
        properties: {
          city: { type: "string", minLength: 1, maxLength: 8 },
          unit: { type: "string", enum: ["celsius", "fahrenheit"] },
        },
        required: ["city"],
        additionalProperties: false,
      },
    },
  },
  {
    type: "function",
    function: {
      name: "search_docs",
      description: "Search the manual.",
      parameters: {
        type: "object",
        properties: {
          query: { type: "string", maxLength: 6 },
          filters: {
            type: "object",
            properties: {
              tags: { type: "array", items: { type: "string", maxLength: 4 }, maxItems: 2 },
              exact: { type: "boolean" },
            },
            required: ["tags"],
            additionalProperties: false,
          },
          limit: { type: "integer", minimum: 1, maximum: 50 },
        },
        required: ["query", "filters", "limit"],
        additionalProperties: false,
      },
    },
  },
  { type: "function", function: { name: "ping", description: "No arguments." } },
];

const ajv = new Ajv({ allErrors: true });
const validators = Object.fromEntries(
  tools.map((t) => [t.function.name, ajv.compile(t.function.parameters ?? { type: "object", properties: {}, additionalProperties: false })]),
);
const messages = [{ role: "user", content: "Use a tool." }];
// A model of random weights rarely closes a JSON array by chance, and the grammar of a forced
// call lets a list of calls (llama3_json's [{...}, {...}]) go on: the tokens that close an array
// are favoured. A bias changes nothing where the grammar masks the token.
const closingBias = {};
for (const text of ["]", "}]"]) {
  const closing = await tokenize({ prompt: text, add_special_tokens: false });
  if (closing.length === 1) closingBias[closing[0]] = 6;
}
const base = { model, messages, tools, max_tokens: 400, temperature: 1, n: 2, logit_bias: closingBias };
const ids = new Set();

// Each call: a fresh call_ id, a known name, arguments that parse and validate.
function checkCalls(calls, what, onlyName) {
  check(Array.isArray(calls) && calls.length >= 1, `${what}: at least one call, got ${JSON.stringify(calls)}`);
  for (const c of calls) {
    check(typeof c.id === "string" && c.id.startsWith("call_"), `${what}: id ${c.id}`);
    check(!ids.has(c.id), `${what}: id ${c.id} is unique`);
    ids.add(c.id);
    checkEqual(c.type, "function", `${what}: type`);
    const name = c.function.name;
    check(name in validators, `${what}: unknown function ${name}`);
    if (onlyName) checkEqual(name, onlyName, `${what}: the named function`);
    let args;
    try {
      args = JSON.parse(c.function.arguments);
    } catch (e) {
      throw new Error(`${what}: arguments are not JSON: ${c.function.arguments}`);
    }
    check(validators[name](args), `${what}: ${name}(${c.function.arguments}): ${ajv.errorsText(validators[name].errors)}`);
  }
}

function checkChoices(choices, what, onlyName, maxCalls = Infinity) {
  checkEqual(choices.length, 2, `${what}: n = 2 choices`);
  for (const choice of choices) {
    const w = `${what} choice ${choice.index}`;
    checkEqual(choice.finish_reason, "tool_calls", `${w}: finish_reason`);
    checkEqual(choice.message.content, null, `${w}: content`);
    checkCalls(choice.message.tool_calls, w, onlyName);
    check(choice.message.tool_calls.length <= maxCalls, `${w}: at most ${maxCalls} calls`);
  }
}

// A stream's deltas put together per choice, as the SDK's accumulating helpers do.
async function streamed(request) {
  const stream = await client.chat.completions.create({ ...request, stream: true });
  const choices = new Map();
  for await (const chunk of stream) {
    for (const c of chunk.choices) {
      if (!choices.has(c.index)) choices.set(c.index, { index: c.index, finish_reason: null, message: { content: null, tool_calls: [] } });
      const acc = choices.get(c.index);
      if (c.delta?.content) acc.message.content = (acc.message.content ?? "") + c.delta.content;
      for (const t of c.delta?.tool_calls ?? []) {
        if (t.id !== undefined) {
          checkEqual(t.index, acc.message.tool_calls.length, "a call's first delta has the next index");
          checkEqual(t.function.arguments, "", "a call's first delta has its name only");
          acc.message.tool_calls.push({ id: t.id, type: t.type, function: { name: t.function.name, arguments: "" } });
        } else {
          check(t.index < acc.message.tool_calls.length, `arguments for call ${t.index} before its first delta`);
          acc.message.tool_calls[t.index].function.arguments += t.function.arguments;
        }
      }
      acc.finish_reason = c.finish_reason ?? acc.finish_reason;
    }
  }
  return [...choices.values()].sort((a, b) => a.index - b.index);
}

async function tokenize(body) {
  const r = await fetch(`http://127.0.0.1:${process.env.ZINFER_PORT}/tokenize`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${process.env.ZINFER_API_KEY}` },
    body: JSON.stringify({ model, ...body }),
  });
  checkEqual(r.status, 200, "/tokenize");
  return (await r.json()).tokens;
}

// Which reference set the served template is: the one whose render of a plain conversation gives
// the prompt the server makes of it.
async function servedTemplate() {
  const conv = conversations.find((c) => c.name === "single_user");  // no system message: the templates differ
  const served = await tokenize({ messages: conv.messages, add_generation_prompt: true });
  for (const name of ["qwen3", "llama3", "llama31_style", "llama31"]) {
    const ref = references(name).find((r) => r.conversation === "single_user" && r.add_generation_prompt && r.enable_thinking === null);
    const ids = await tokenize({ prompt: ref.text, add_special_tokens: false });
    if (JSON.stringify(ids) === JSON.stringify(served)) return name;
  }
  throw new Error("the served chat template is none of qwen3, llama3, llama31_style, llama31");
}

async function tokenCount(text) {
  return (await tokenize({ prompt: text, add_special_tokens: false })).length;
}

await run({
  async requiredNonStream() {
    for (let seed = 1; seed <= 3; ++seed) {
      const r = await client.chat.completions.create({ ...base, tool_choice: "required", seed });
      checkChoices(r.choices, `required, seed ${seed}`);
    }
  },
  async requiredStream() {
    for (let seed = 4; seed <= 6; ++seed) {
      checkChoices(await streamed({ ...base, tool_choice: "required", seed }), `required stream, seed ${seed}`);
    }
  },
  async requiredWithoutParallelCallsMakesOne() {
    const r = await client.chat.completions.create({ ...base, tool_choice: "required", parallel_tool_calls: false, seed: 7 });
    checkChoices(r.choices, "required, parallel_tool_calls false", undefined, 1);
    checkChoices(await streamed({ ...base, tool_choice: "required", parallel_tool_calls: false, seed: 8 }),
      "required stream, parallel_tool_calls false", undefined, 1);
  },
  async namedNonStream() {
    for (const name of ["get_weather", "search_docs", "ping"]) {
      const r = await client.chat.completions.create({ ...base, tool_choice: { type: "function", function: { name } }, seed: 9 });
      checkChoices(r.choices, `named ${name}`, name, 1);
    }
  },
  async namedStream() {
    for (const name of ["get_weather", "search_docs"]) {
      checkChoices(await streamed({ ...base, tool_choice: { type: "function", function: { name } }, seed: 10 }),
        `named stream ${name}`, name, 1);
    }
  },
  async historyWithCallsAndResultsRendersAsTheReference() {
    const family = await servedTemplate();
    console.log(`     served template: ${family}`);
    const refs = references(family);
    for (const name of ["tool_parallel_calls", "tool_result_then_new_question", "tool_nested_unicode_arguments"]) {
      const conv = conversations.find((c) => c.name === name);
      const ref = refs.find((r) => r.conversation === name && r.add_generation_prompt && r.enable_thinking === null);
      // As an OpenAI client sends it: arguments as JSON text, content null next to calls.
      const wire = conv.messages.map((m) => m.tool_calls
        ? { ...m, content: m.content === "" ? null : m.content,
            tool_calls: m.tool_calls.map((c) => ({ ...c, function: { ...c.function, arguments: JSON.stringify(c.function.arguments) } })) }
        : m);
      const request = { model, messages: wire, tools: conv.tools, tool_choice: "none", max_tokens: 1 };
      if (ref.error) {
        // The template refuses it (Meta's Llama 3.1 template: one call per message): a 400, as
        // any template error.
        await expectError(client.chat.completions.create(request), 400, `${name}: ${ref.error}`);
        continue;
      }
      const r = await client.chat.completions.create(request);
      checkEqual(r.usage.prompt_tokens, await tokenCount(ref.text), `${name}: the prompt is the reference render`);
      // vLLM's /tokenize takes the tools too, and renders the same prompt.
      const viaTokenize = await tokenize({ messages: wire, tools: conv.tools, add_generation_prompt: true });
      checkEqual(JSON.stringify(viaTokenize), JSON.stringify(await tokenize({ prompt: ref.text, add_special_tokens: false })),
                 `${name}: /tokenize with tools is the reference render`);
    }
  },
  async autoAnswersWellFormed() {
    const r = await client.chat.completions.create({ ...base, max_tokens: 24, seed: 11 });
    for (const choice of r.choices) {
      if (choice.finish_reason === "tool_calls") {
        checkCalls(choice.message.tool_calls, "auto");
      } else {
        check(typeof choice.message.content === "string", `auto: content is text (${JSON.stringify(choice.message)})`);
        check(!choice.message.tool_calls, "auto: no calls without finish_reason tool_calls");
      }
    }
    const s = await streamed({ ...base, max_tokens: 24, seed: 11 });
    checkEqual(s.map((c) => c.finish_reason), r.choices.map((c) => c.finish_reason), "auto: stream and non-stream end alike");
  },
  async badToolFieldsAreRefusedByName() {
    const cases = [
      [{ tools: [{ type: "function", function: { name: "" } }] }, "tools[0].function.name"],
      [{ tool_choice: { type: "function", function: { name: "nope" } } }, "tool_choice.function.name"],
      [{ tool_choice: "sometimes" }, "tool_choice"],
      [{ messages: [...messages, { role: "assistant", content: null, tool_calls: [{ id: "call_x", type: "function", function: { name: "ping", arguments: "{bad" } }] }] },
        "messages[1].tool_calls[0].function.arguments"],
    ];
    for (const [extra, param] of cases) {
      const err = await expectError(client.chat.completions.create({ ...base, n: 1, max_tokens: 4, ...extra }), 400, param);
      checkEqual(err.param ?? err.error?.param, param, "the 400 names the field");
    }
  },
});

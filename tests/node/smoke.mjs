// The OpenAI Node SDK against zinfer: models, completions and chat, each streamed and not, and an
// error in OpenAI's shape.
import { check, checkEqual, client, expectError, model, run } from "./common.mjs";

await run({
  async models() {
    const list = await client.models.list();
    check(list.data.some((m) => m.id === model), `models.list() has ${model}`);
  },
  async completion() {
    const r = await client.completions.create({ model, prompt: "Hello", max_tokens: 5, temperature: 0 });
    checkEqual(r.object, "text_completion", "object");
    checkEqual(r.choices.length, 1, "choices");
    checkEqual(r.usage.completion_tokens, r.choices[0].finish_reason === "length" ? 5 : r.usage.completion_tokens, "usage");
  },
  async chatStream() {
    const stream = await client.chat.completions.create({
      model, messages: [{ role: "user", content: "Hi" }], max_tokens: 6, temperature: 0, stream: true,
      stream_options: { include_usage: true },
    });
    let text = "", finish = null, usage = null;
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        text += c.delta?.content ?? "";
        finish = c.finish_reason ?? finish;
      }
      usage = chunk.usage ?? usage;
    }
    const whole = await client.chat.completions.create({
      model, messages: [{ role: "user", content: "Hi" }], max_tokens: 6, temperature: 0,
    });
    checkEqual(text, whole.choices[0].message.content, "streamed text equals the non-streamed one");
    checkEqual(finish, whole.choices[0].finish_reason, "finish_reason");
    checkEqual(usage?.completion_tokens, whole.usage.completion_tokens, "usage in the last chunk");
  },
  async errorShape() {
    await expectError(client.chat.completions.create({ model, messages: [], max_tokens: 4 }), 400, "empty messages");
    await expectError(client.chat.completions.create({ model: "no-such-model", messages: [{ role: "user", content: "x" }] }),
      404, "unknown model");
  },
});

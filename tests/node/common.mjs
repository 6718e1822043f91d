// Shared by the Node SDK tests: the client for the server node_sdk.py started, and checks that
// name what failed (a failed check throws; run() turns it into a non-zero exit).
import OpenAI from "openai";

export const client = new OpenAI({
  baseURL: process.env.ZINFER_BASE_URL,
  apiKey: process.env.ZINFER_API_KEY || "none",
  maxRetries: 0,
  timeout: 120_000,
});
export const model = process.env.ZINFER_MODEL;

export function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

export function checkEqual(got, expected, what) {
  const g = JSON.stringify(got), e = JSON.stringify(expected);
  if (g !== e) throw new Error(`${what}: got ${g}, expected ${e}`);
}

// The SDK's error for a request the server refused: its status and message.
export async function expectError(promise, status, what) {
  try {
    await promise;
  } catch (err) {
    if (err instanceof OpenAI.APIError) {
      checkEqual(err.status, status, `${what}: status (${err.message})`);
      return err;
    }
    throw err;
  }
  throw new Error(`${what}: succeeded, expected HTTP ${status}`);
}

// Runs named test functions in order; prints each and exits 1 at the first failure.
export async function run(tests) {
  for (const [name, body] of Object.entries(tests)) {
    try {
      await body();
      console.log(`ok   ${name}`);
    } catch (err) {
      console.log(`FAIL ${name}: ${err.stack || err}`);
      process.exit(1);
    }
  }
}

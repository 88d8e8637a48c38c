// pi-ai's own request shaping and argument parsing, for differential tests of pi_lsp.llm.
// stdin: JSON Lines, one request each; stdout: one JSON line each.
//   {"op": "parse", "text": <string>}  ->  {"value": parseStreamingJson(text)}
//   {"op": "convert", "systemPrompt", "messages", "images": <bool>}  ->  {"value": convertMessages(...)}
// Run in the peer directory (tests/peer.py run_peer_script) so the imports resolve there.
import { parseStreamingJson } from "@mariozechner/pi-ai";
import { convertMessages } from "@mariozechner/pi-ai/openai-completions";
import { createInterface } from "node:readline";

const compat = {
	supportsDeveloperRole: false,
	requiresAssistantAfterToolResult: false,
	requiresThinkingAsText: false,
	requiresToolResultName: false,
	requiresReasoningContentOnAssistantMessages: false,
};
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
	if (!line.trim()) continue;
	const request = JSON.parse(line);
	if (request.op === "parse") {
		const value = parseStreamingJson(request.text);
		console.log(JSON.stringify({ value: value === undefined ? "UNDEFINED" : value }));
	} else {
		const model = {
			id: "m", provider: "openai-compatible", api: "openai-completions", baseUrl: "http://127.0.0.1/v1",
			input: request.images ? ["text", "image"] : ["text"], reasoning: false,
		};
		const value = convertMessages(model, { systemPrompt: request.systemPrompt, messages: request.messages }, compat);
		console.log(JSON.stringify({ value }));
	}
}

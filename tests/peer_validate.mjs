// Validate raw arguments with the peer's own code: Pi's tool schemas and pi-ai's validateToolArguments.
// stdin: JSON Lines {"name": <tool>, "arguments": <any>}; stdout: one line each,
// {"ok": true, "args": <coerced>} or {"ok": false, "error": <message>}. No prepareArguments, no execute.
// Run with the peer directory as cwd: node --input-type=module -e "$(cat peer_validate.mjs)"
import { createReadTool, createBashTool, createEditTool, createWriteTool, createGrepTool, createFindTool, createLsTool } from "@mariozechner/pi-coding-agent";
import { validateToolArguments } from "@mariozechner/pi-ai";
import { createInterface } from "node:readline";

const tools = {};
for (const create of [createReadTool, createBashTool, createEditTool, createWriteTool, createGrepTool, createFindTool, createLsTool]) {
	const tool = create(process.cwd());
	tools[tool.name] = tool;
}
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
	if (!line.trim()) continue;
	const request = JSON.parse(line);
	try {
		const args = validateToolArguments(tools[request.name], { type: "toolCall", id: "v", name: request.name, arguments: request.arguments });
		console.log(JSON.stringify({ ok: true, args }));
	} catch (error) {
		console.log(JSON.stringify({ ok: false, error: error instanceof Error ? error.message : String(error) }));
	}
}

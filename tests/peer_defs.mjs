// Print the peer's built-in tool definitions (name, label, description, JSON Schema) as one JSON array.
// Run with the peer directory as cwd: node --input-type=module -e "$(cat peer_defs.mjs)"
import { createReadTool, createBashTool, createEditTool, createWriteTool, createGrepTool, createFindTool, createLsTool } from "@mariozechner/pi-coding-agent";

const defs = [createReadTool, createBashTool, createEditTool, createWriteTool, createGrepTool, createFindTool, createLsTool].map((create) => {
	const tool = create(process.cwd());
	return {
		name: tool.name,
		label: tool.label,
		description: tool.description,
		parameters: JSON.parse(JSON.stringify(tool.parameters)),
		executionMode: tool.executionMode ?? null,
		hasPrepare: Boolean(tool.prepareArguments),
	};
});
console.log(JSON.stringify(defs));

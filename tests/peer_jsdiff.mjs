// The reference for pi-lsp's edit diffs: Pi's own generateDiffString (the display diff and first
// changed line the peer's edit returns) and jsdiff's createTwoFilesPatch with file headers only.
// stdin: JSON Lines {"old": <LF text>, "new": <LF text>}; stdout: {"diff", "first", "patch"} per line.
// Run with the peer directory as cwd (deep file import: the package's exports hide edit-diff.js).
import { pathToFileURL } from "node:url";
import { createInterface } from "node:readline";

const base = pathToFileURL(process.cwd() + "/node_modules/").href;
const { generateDiffString } = await import(base + "@mariozechner/pi-coding-agent/dist/core/tools/edit-diff.js");
const Diff = await import(base + "diff/libesm/index.js");
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
	if (!line.trim()) continue;
	const { old, new: neu } = JSON.parse(line);
	const shown = generateDiffString(old, neu);
	const patch = Diff.createTwoFilesPatch("p.txt", "p.txt", old, neu, undefined, undefined, {
		context: 4,
		headerOptions: Diff.FILE_HEADERS_ONLY,
	});
	console.log(JSON.stringify({ diff: shown.diff, first: shown.firstChangedLine ?? null, patch }));
}

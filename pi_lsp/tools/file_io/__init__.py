"""The file side the tools share: the ``FileAccess`` seam, safe writes, line endings, encodings,
content sniffing, path resolution, OS errors in Node's words and the per-file mutation queue."""

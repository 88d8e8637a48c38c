"""The change journal (design.md section 9, issue 18): what the agent changed, kept or taken back.

Every agent mutation is recorded per session and turn with its provenance: ``edit`` and ``write``
through the ``FileAccess`` seam (:mod:`.journaling_files`), ``bash`` by comparing a snapshot of
the workspace before and after the command (:mod:`.workspace_scan`, :mod:`.bash_changes`). Before-contents are kept
content-addressed (:mod:`.blobs`), bounded by size (beyond it a file is marked not restorable).
:mod:`.change_set` turns the journal into files and hunks, each still as the agent left it or
changed since; :mod:`.revert` takes hunks, files or turns back through ``FileAccess`` (so through the
editor, as one undo step, when it holds the file) and never overwrites text changed after the agent.
"""

--- pi_lsp.config: the plugin's options, their defaults and how they merge.
---
--- Every option is user scope: it comes from `setup(opts)` in the user's own config, never from a
--- file inside a workspace (design.md section 5: `cmd`, `settings.baseUrl`, `settings.apiKeyEnv`
--- and `settings.approvals` can leak keys or widen rights).
local M = {}

--- The defaults. Units: milliseconds for every `*_ms` option.
M.defaults = {
  --- The server command (a list: program then arguments). The program is looked up on PATH.
  cmd = { 'pi-lsp' },
  --- Extra environment for the server process (a table name -> value), or nil.
  cmd_env = nil,
  --- A buffer is attached when one of its parent folders holds one of these; that folder is the
  --- workspace root. Without a marker, a buffer under the current directory uses that directory.
  root_markers = { '.git', '.hg', 'AGENTS.md', 'pyproject.toml', 'package.json' },
  --- The `pi` settings section (design.md section 5), sent as `initializationOptions.pi` and
  --- answered to `workspace/configuration` (section `pi`).
  settings = {},
  --- didChange debounce for the pi-lsp client. 0 sends every change at once: pi-lsp verifies an
  --- agent edit by the didChange that carries it, and a save must not overtake that didChange.
  debounce_text_changes = 0,
  --- How long `vim.ui.select` may take to answer an approval before it counts as no answer
  --- (the server then applies `pi.approvals.fallback`).
  approval_timeout_ms = 120000,
  --- The type-ahead guard of the approval prompt and the edit review (`pi_lsp.typeahead`): a
  --- prompt takes keys as answers only once no key has arrived for this long; keys typed before
  --- are given back to Neovim when it closes. 0 turns the guard off.
  prompt_guard_ms = 500,
  --- How the transcript opens: a command run before showing the buffer (`botright split`,
  --- `vsplit`, `tabnew`...). The transcript window is not entered.
  transcript_split = 'botright 12split',
  --- Lines kept by :PiLog (older ones are dropped).
  log_lines = 2000,
  --- Attach buffers automatically on BufReadPost/BufNewFile.
  autostart = true,
  --- Issue 17 (pi-lsp asks your language servers through Neovim): how long to wait for the
  --- language servers of a file loaded for pi-lsp to attach and initialize.
  attach_timeout_ms = 5000,
  --- How long to wait for a language server to attach to such a file when none of the running
  --- servers is expected to (none handles its filetype yet): autostarts attach during FileType.
  attach_grace_ms = 500,
  --- How long to wait for your language servers to answer a request relayed for pi-lsp (late
  --- requests are cancelled; pi-lsp's own bound is `languageServer.timeoutSeconds`, 10 s).
  language_server_timeout_ms = 8000,
  --- How long `pi/diagnosticsChanged` notifications are coalesced (the wire contract allows 50).
  diagnostics_coalesce_ms = 20,
}

--- The merged options (valid after `setup`; `M.get()` returns the defaults before).
local current = nil

--- The type of each option (all optional in `setup(opts)`).
local TYPES = {
  cmd = 'table',
  cmd_env = 'table',
  root_markers = 'table',
  settings = 'table',
  debounce_text_changes = 'number',
  approval_timeout_ms = 'number',
  prompt_guard_ms = 'number',
  transcript_split = 'string',
  log_lines = 'number',
  autostart = 'boolean',
  attach_timeout_ms = 'number',
  attach_grace_ms = 'number',
  language_server_timeout_ms = 'number',
  diagnostics_coalesce_ms = 'number',
}

--- `vim.validate` in the form each version documents: `(name, value, type, optional)` from 0.11
--- (the table form is deprecated there), the table form before.
local function validate(name, value, kind)
  if vim.fn.has('nvim-0.11') == 1 then
    vim.validate(name, value, kind, true)
  else
    vim.validate({ [name] = { value, kind, true } })
  end
end

--- Merge `opts` (a table or nil) over the defaults; lists replace lists, tables merge deeply.
--- Raises an error naming the option when a value has the wrong type.
function M.set(opts)
  opts = opts or {}
  local names = vim.tbl_keys(TYPES)
  table.sort(names)
  for _, name in ipairs(names) do
    validate(name, opts[name], TYPES[name])
  end
  local merged = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
  -- lists are replaced, not merged index by index
  for _, key in ipairs({ 'cmd', 'root_markers' }) do
    if opts[key] then
      merged[key] = vim.deepcopy(opts[key])
    end
  end
  current = merged
  return merged
end

--- The current options (the defaults when `setup` has not run).
function M.get()
  return current or M.set({})
end

return M

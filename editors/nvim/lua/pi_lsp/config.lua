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

--- Options that must be lists of strings (non-empty for `cmd`).
local STRING_LISTS = { cmd = true, root_markers = true }

--- The problems the last `M.set` found (a list of strings, each naming the option), for
--- `:checkhealth pi_lsp`.
M.problems = {}

--- Levenshtein distance between two short strings (bytes).
local function distance(a, b)
  local row = {}
  for j = 0, #b do
    row[j] = j
  end
  for i = 1, #a do
    local diagonal, left = row[0], i
    row[0] = i
    for j = 1, #b do
      local above = row[j]
      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
      left = math.min(above + 1, left + 1, diagonal + cost)
      diagonal, row[j] = above, left
    end
  end
  return row[#b]
end

--- The known option closest to `name` (a string) when it is a likely misspelling, else nil.
local function suggestion(name)
  local best, best_distance = nil, math.huge
  for known in pairs(TYPES) do
    local d = distance(name:lower(), known)
    if d < best_distance or (d == best_distance and known < best) then
      best, best_distance = known, d
    end
  end
  if best and best_distance <= math.max(2, math.floor(#best / 3)) then
    return best
  end
  return nil
end

--- A short rendering of a bad value for a message.
local function shown(value)
  local text = type(value) == 'string' and string.format('%q', value) or vim.inspect(value)
  text = text:gsub('%s+', ' ')
  if #text > 40 then
    text = text:sub(1, 37) .. '...'
  end
  return string.format('%s %s', type(value), text)
end

--- What is wrong with option `name` set to `value` (not nil), or nil when it is fine.
local function problem_of(name, value)
  local kind = TYPES[name]
  if type(value) ~= kind then
    return string.format('`%s` must be a %s, got %s; the default is used', name, kind, shown(value))
  end
  if STRING_LISTS[name] then
    if #value == 0 and name == 'cmd' then
      return '`cmd` must be a non-empty list (program, then arguments); the default is used'
    end
    for key, item in pairs(value) do
      if type(key) ~= 'number' or type(item) ~= 'string' then
        return string.format('`%s` must be a list of strings, got an entry %s = %s; the default is used',
          name, tostring(key), shown(item))
      end
    end
  end
  return nil
end

--- Merge `opts` (a table or nil) over the defaults; lists replace lists, tables merge deeply.
--- Never raises: an option of the wrong type keeps its default and an unknown option is ignored;
--- each such problem is a string in `M.problems` (naming the option, what it expects, and for an
--- unknown name the closest known one) and all of them are reported in one vim.notify (WARN).
--- Returns the merged options.
function M.set(opts)
  local problems = {}
  if opts ~= nil and type(opts) ~= 'table' then
    table.insert(problems, string.format('setup() takes a table of options, got %s; the defaults are used', shown(opts)))
    opts = nil
  end
  local valid = {}
  local names = vim.tbl_keys(opts or {})
  table.sort(names, function(a, b) return tostring(a) < tostring(b) end)
  for _, name in ipairs(names) do
    local value = opts[name]
    if type(name) ~= 'string' or not TYPES[name] then
      local near = type(name) == 'string' and suggestion(name) or nil
      table.insert(problems, string.format('unknown option `%s`%s; it is ignored', tostring(name),
        near and string.format(' (did you mean `%s`?)', near) or ''))
    else
      local problem = problem_of(name, value)
      if problem then
        table.insert(problems, problem)
      else
        valid[name] = value
      end
    end
  end
  local merged = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), valid)
  -- lists are replaced, not merged index by index
  for _, key in ipairs({ 'cmd', 'root_markers' }) do
    if valid[key] then
      merged[key] = vim.deepcopy(valid[key])
    end
  end
  current = merged
  M.problems = problems
  if #problems > 0 then
    local lines = { 'pi-lsp setup(): ' .. #problems .. ' problem' .. (#problems == 1 and '' or 's') .. ' in the options:' }
    for _, problem in ipairs(problems) do
      table.insert(lines, '  ' .. problem)
    end
    vim.notify(table.concat(lines, '\n'), vim.log.levels.WARN)
  end
  return merged
end

--- The current options (the defaults when `setup` has not run).
function M.get()
  return current or M.set({})
end

return M

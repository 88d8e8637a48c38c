--- pi_lsp.changes: the `pi://changes` buffer of :PiChanges (issue 18), a review of what the agent
--- changed, fed by `pi/changes` and acting through `pi/revertChanges` / `pi/keepChanges`.
---
--- The buffer lists the session's files (or one turn's) and, under each, its hunks with their
--- status and a diff preview (diff-highlighted). Line numbers shown are 1-based; the wire's are
--- 0-based (`oldStart`, `newStart`, `currentStart`):
---
---   `pi changes · session 3f2a… · all turns`           what is listed
---   `k keep · u undo hunk · U undo file · P undo last prompt · T undo all listed · <CR> open · d diff · r refresh · q close`
---   `reverted 1 hunk(s) · greet.py: reverted hunks`     the last action's result
---   `conflict: greet.py @@ 5: changed since …`          a conflict (nothing was forced)
---   `greet.py  modified · 2 hunks`                      a file
---   `  @@ -2,1 +2,1 @@ applied`                         a hunk (status: applied|changed|reverted|kept)
---   `  -    return "hi"` / `  +    return "hello"`      its diff
---
--- Reverts come back as `workspace/applyEdit` (one undo step per file in the editor), so `:undo`
--- in the file takes a revert back.
local client_mod = require('pi_lsp.client')

local M = {}

local api = vim.api
local scratch_buffers = require('pi_lsp.scratch')
local NAME = 'pi://changes'
local HL = api.nvim_create_namespace('pi_lsp_changes')
M.EXTERNAL = 'external'

for group, link in pairs({
  PiLspDiffAdd = 'DiffAdd',
  PiLspDiffDelete = 'DiffDelete',
  PiLspDiffHunk = 'DiffChange',
  PiLspChangesFile = 'Directory',
  PiLspChangesTitle = 'Title',
  PiLspChangesKeys = 'Comment',
  PiLspChangesResult = 'MoreMsg',
  PiLspError = 'ErrorMsg',
}) do
  vim.cmd(string.format('highlight default link %s %s', group, link))
end

--- What the buffer shows: `{session, turn, current_turn, root, files, rows, messages, pending}`;
--- `rows[row]` (1-based) is `{file = entry, hunk = hunk?}`; `pending` counts requests in flight.
--- A new :PiChanges replaces it; answers to the requests of a replaced state are dropped.
M.state = { rows = {}, messages = {}, files = nil, pending = 0 }

local buf = nil
local send -- defined below `call`

local function buffer()
  local created
  buf, created = scratch_buffers.named(NAME, 'pi_changes')
  if not created then
    return buf
  end
  local keys = {
    k = M.keep,
    u = M.undo_hunk,
    U = M.undo_file,
    T = M.undo_all,
    P = M.undo_last_prompt,
    ['<CR>'] = M.open_at_cursor,
    d = M.diff_at_cursor,
    r = M.refresh,
    q = function()
      if not pcall(vim.cmd, 'close') then -- the last window
        vim.cmd('enew')
      end
    end,
  }
  for lhs, fn in pairs(keys) do
    vim.keymap.set('n', lhs, function()
      fn()
    end, { buffer = buf, nowait = true, silent = true })
  end
  return buf
end

--- The changes buffer (nil before the first :PiChanges).
function M.buffer()
  return (buf and api.nvim_buf_is_valid(buf)) and buf or nil
end

--- The buffer's lines (for tests and scripts).
function M.lines()
  local b = M.buffer()
  return b and api.nvim_buf_get_lines(b, 0, -1, false) or {}
end

--- Whether no request of this view is in flight (tests and scripts wait for it).
function M.idle()
  return M.state.pending == 0
end

--- A path relative to the workspace root when under it.
local function relative(path)
  local root = M.state.root
  for _, dir in ipairs({ root, root and (vim.uv or vim.loop).fs_realpath(root) }) do
    if dir and path:sub(1, #dir + 1) == dir .. '/' then
      return path:sub(#dir + 2)
    end
  end
  return path
end

--- `text` (lines with endings) as a list of lines without them.
local function text_lines(text)
  local out = {}
  if type(text) ~= 'string' or text == '' then
    return out
  end
  text = text:gsub('\r\n', '\n'):gsub('\r', '\n')
  if text:sub(-1) == '\n' then
    text = text:sub(1, -2)
  end
  for line in (text .. '\n'):gmatch('(.-)\n') do
    table.insert(out, line)
  end
  return out
end

--- The unified-diff range `start,count` (1-based start; a count of 0 names the line before).
local function range(start, count)
  return string.format('%d,%d', count == 0 and start or start + 1, count)
end

--- The hunk header: `@@ -old +new @@ status` (1-based line numbers, as in a unified diff).
function M.hunk_header(hunk)
  return string.format('@@ -%s +%s @@ %s', range(hunk.oldStart, hunk.oldLines), range(hunk.newStart, hunk.newLines),
    tostring(hunk.status))
end

local function file_header(entry)
  local parts = { tostring(entry.state) }
  if entry.binary then
    table.insert(parts, 'binary')
  end
  if entry.restorable == false then
    table.insert(parts, 'not restorable')
  end
  if entry.current and entry.current ~= 'agent' then
    table.insert(parts, 'now ' .. tostring(entry.current))
  end
  local n = #(entry.hunks or {})
  if n > 0 then
    table.insert(parts, n == 1 and '1 hunk' or (n .. ' hunks'))
  end
  return relative(entry.path) .. '  ' .. table.concat(parts, ' · ')
end

local function render()
  local b = buffer()
  local state = M.state
  local lines, groups, rows = {}, {}, {}
  local function add(text, group, row)
    table.insert(lines, text)
    groups[#lines] = group
    rows[#lines] = row
  end
  local session = state.session == M.EXTERNAL and 'external' or ('session ' .. tostring(state.session))
  add(string.format('pi changes · %s · %s', session, state.turn and ('turn ' .. state.turn) or 'all turns'),
    'PiLspChangesTitle')
  add('k keep · u undo hunk · U undo file · P undo last prompt · T undo all listed · <CR> open · d diff · r refresh · q close',
    'PiLspChangesKeys')
  for _, message in ipairs(state.messages) do
    add(message.text, message.group)
  end
  add('')
  if state.files == nil then
    add('loading…', 'PiLspChangesKeys')
  elseif #state.files == 0 then
    add('no changes', 'PiLspChangesKeys')
  end
  for _, entry in ipairs(state.files or {}) do
    add(file_header(entry), 'PiLspChangesFile', { file = entry })
    for _, hunk in ipairs(entry.hunks or {}) do
      local at = { file = entry, hunk = hunk }
      add('  ' .. M.hunk_header(hunk), 'PiLspDiffHunk', at)
      for _, line in ipairs(text_lines(hunk.oldText)) do
        add('  -' .. line, 'PiLspDiffDelete', at)
      end
      for _, line in ipairs(text_lines(hunk.newText)) do
        add('  +' .. line, 'PiLspDiffAdd', at)
      end
    end
  end
  vim.bo[b].modifiable = true
  api.nvim_buf_set_lines(b, 0, -1, false, lines)
  vim.bo[b].modifiable = false
  api.nvim_buf_clear_namespace(b, HL, 0, -1)
  for row, group in pairs(groups) do
    api.nvim_buf_add_highlight(b, HL, group, row - 1, 0, -1)
  end
  state.rows = rows
end

local function client()
  local c, problem = client_mod.current()
  if not c then
    vim.notify(problem, vim.log.levels.ERROR)
  end
  return c
end

--- Run `fn` once client `c` is initialized and has sent the didOpen of its buffers (those go out
--- while it initializes, so a scheduled callback comes after them); `gone()` when it exits first.
local function when_ready(c, fn, gone)
  if vim.lsp.get_client_by_id(c.id) == nil then
    return gone()
  end
  if c.initialized then
    return vim.schedule(fn)
  end
  vim.defer_fn(function()
    when_ready(c, fn, gone)
  end, 10)
end

--- Send `method` with `params` (once the client is ready: a server just started again must
--- know the buffers first); `done(result)` on success, else the error becomes a message.
local function call(method, params, done)
  local c = client()
  if not c then
    return false
  end
  local state = M.state
  state.pending = state.pending + 1
  when_ready(c, function()
    send(c, state, method, params, done)
  end, function()
    state.pending = state.pending - 1
    vim.notify('pi_lsp: the server exited', vim.log.levels.ERROR)
  end)
  return true
end

send = function(c, state, method, params, done)
  local sent = client_mod.request(c, method, params, function(err, result)
    state.pending = state.pending - 1
    if M.state ~= state then
      return -- a newer :PiChanges replaced this view
    end
    if err then
      local text = 'pi-lsp: ' .. tostring(err.message or err)
      M.state.messages = { { text = text, group = 'PiLspError' } }
      vim.notify(text, vim.log.levels.ERROR)
      render()
      return
    end
    done(result)
  end)
  if sent == false then
    state.pending = state.pending - 1
    vim.notify('pi_lsp: the server is not running', vim.log.levels.ERROR)
  end
end

--- Fetch the change set again (`pi/changes`) and redraw (files sorted by path); the cursor stays
--- on its row.
function M.refresh()
  local params = { sessionId = M.state.session }
  if M.state.turn then
    params.turn = M.state.turn
  end
  return call('pi/changes', params, function(result)
    local files = type(result) == 'table' and type(result.files) == 'table' and result.files or {}
    table.sort(files, function(a, b)
      return tostring(a.path) < tostring(b.path)
    end)
    M.state.files = files
    M.state.current_turn = type(result) == 'table' and result.currentTurn or nil
    local prompt = type(result) == 'table' and result.currentPrompt or nil
    M.state.current_prompt = type(prompt) == 'number' and prompt or nil
    render()
  end)
end

--- The lines that report a `pi/revertChanges` / `pi/keepChanges` answer.
function M.report_lines(result)
  local out = {}
  if type(result) ~= 'table' then
    return out
  end
  if result.kept then
    table.insert(out, { text = string.format('kept %d hunk(s)', #result.kept), group = 'PiLspChangesResult' })
    return out
  end
  local done = {}
  for _, f in ipairs(result.files or {}) do
    table.insert(done, relative(tostring(f.path)) .. ': ' .. tostring(f.action))
  end
  local summary = string.format('reverted %d hunk(s)', #(result.reverted or {}))
  if #done > 0 then
    summary = summary .. ' · ' .. table.concat(done, ', ')
  end
  table.insert(out, { text = summary, group = 'PiLspChangesResult' })
  for _, conflict in ipairs(result.conflicts or {}) do
    local where = relative(tostring(conflict.path))
    local hunk = conflict.hunk and M.hunk_by_id(conflict.hunk)
    if hunk then
      where = where .. ' @@ ' .. (hunk.newStart + 1)
    end
    table.insert(out, { text = 'conflict: ' .. where .. ': ' .. tostring(conflict.reason), group = 'PiLspError' })
  end
  return out
end

--- The listed hunk with `id`, or nil.
function M.hunk_by_id(id)
  for _, entry in ipairs(M.state.files or {}) do
    for _, hunk in ipairs(entry.hunks or {}) do
      if hunk.id == id then
        return hunk
      end
    end
  end
  return nil
end

--- Send an action and show its report, then refresh.
local function act(method, params)
  params.sessionId = M.state.session
  return call(method, params, function(result)
    M.state.messages = M.report_lines(result)
    local conflicts = type(result) == 'table' and result.conflicts or {}
    if #conflicts > 0 then
      vim.notify(string.format('pi_lsp: %d conflict(s), left as they are (see :PiChanges)', #conflicts),
        vim.log.levels.WARN)
    end
    M.refresh()
  end)
end

--- The `{file, hunk?}` under the cursor in the changes buffer, or nil.
function M.at_cursor()
  if api.nvim_get_current_buf() ~= M.buffer() then
    return nil
  end
  return M.state.rows[api.nvim_win_get_cursor(0)[1]]
end

local function need_hunk()
  local at = M.at_cursor()
  if not at or not at.hunk then
    vim.notify('pi_lsp: put the cursor on a hunk', vim.log.levels.WARN)
    return nil
  end
  return at.hunk
end

--- `k`: mark the hunk under the cursor kept (`pi/keepChanges`).
function M.keep()
  local hunk = need_hunk()
  return hunk and act('pi/keepChanges', { hunks = { hunk.id } })
end

--- `u`: take back the hunk under the cursor (`pi/revertChanges {hunks}`).
function M.undo_hunk()
  local hunk = need_hunk()
  return hunk and act('pi/revertChanges', { hunks = { hunk.id } })
end

--- `U`: take back the file under the cursor (`pi/revertChanges {files}`): every hunk still as the
--- agent left it, a created file deleted, a deleted one restored; changed hunks are conflicts.
function M.undo_file()
  local at = M.at_cursor()
  if not at then
    vim.notify('pi_lsp: put the cursor on a file or a hunk', vim.log.levels.WARN)
    return nil
  end
  return act('pi/revertChanges', { files = { at.file.path } })
end

--- `P`: take back what the session's last prompt changed (all its model turns: what the user
--- asked last), `pi/revertChanges {prompt}`.
function M.undo_last_prompt()
  local prompt = M.state.current_prompt
  if not prompt then
    M.state.messages = { { text = 'no prompt of this session is recorded: T undoes all listed', group = 'PiLspError' } }
    render()
    return nil
  end
  return act('pi/revertChanges', { prompt = prompt })
end

--- `T`: take back everything listed: the turn shown, or the whole session (`pi/revertChanges`),
--- after asking in the approval prompt (`pi_lsp.approvals.confirm`, type-ahead guarded), as Emacs
--- asks with `y-or-n-p`: it is the largest undo and one key away from `U`.
function M.undo_all()
  local state = M.state
  local what = state.session == M.EXTERNAL and 'the external calls' or ('session ' .. tostring(state.session))
  if state.turn then
    what = string.format('turn %s of %s', tostring(state.turn), what)
  end
  local ok = require('pi_lsp.approvals').confirm('Undo everything listed?',
    'Take back every change of ' .. what .. ' still as the agent left it\n'
      .. '(created files are deleted; hunks you changed since are reported as conflicts).',
    'Undo everything listed')
  if not ok or M.state ~= state then
    return nil
  end
  return act('pi/revertChanges', { turn = state.turn })
end

--- `<CR>`: open the file under the cursor at the hunk (its current line when the server located
--- it, else its line in the agent's result): in a window showing it, else the previous window.
function M.open_at_cursor()
  local at = M.at_cursor()
  if not at then
    return nil
  end
  local line = 1
  if at.hunk then
    local start = at.hunk.currentStart
    if type(start) ~= 'number' then
      start = at.hunk.newStart
    end
    line = start + 1
  end
  local target = vim.fn.bufadd(at.file.path)
  local win = vim.fn.bufwinid(target)
  if win ~= -1 then
    api.nvim_set_current_win(win)
  else
    local current = api.nvim_get_current_win()
    vim.cmd('wincmd p')
    if api.nvim_get_current_win() == current then
      vim.cmd('aboveleft split')
    end
    vim.fn.bufload(target)
    vim.bo[target].buflisted = true
    api.nvim_win_set_buf(0, target) -- unlike :edit, fine when the window's buffer is modified
  end
  local last = api.nvim_buf_line_count(0)
  api.nvim_win_set_cursor(0, { math.max(1, math.min(line, last)), 0 })
  return true
end

--- The lines of `bufnr` with every hunk still located in it (`currentStart` set: applied or kept)
--- put back to its old lines: what undoing the file would leave.
function M.undone_lines(bufnr, hunks)
  local lines = api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local located = {}
  for _, hunk in ipairs(hunks or {}) do
    if type(hunk.currentStart) == 'number' and (hunk.status == 'applied' or hunk.status == 'kept') then
      table.insert(located, hunk)
    end
  end
  table.sort(located, function(a, b)
    return a.currentStart > b.currentStart
  end)
  for _, hunk in ipairs(located) do
    for _ = 1, hunk.newLines do
      table.remove(lines, hunk.currentStart + 1)
    end
    for i, line in ipairs(text_lines(hunk.oldText)) do
      table.insert(lines, hunk.currentStart + i, line)
    end
  end
  return lines
end

--- `d`: the file under the cursor (opened as `<CR>` does) in diff mode beside `pi://undone/{path}`,
--- a scratch copy of it with the agent's located hunks taken back (|M.undone_lines|). Closing the
--- scratch window ends the diff.
function M.diff_at_cursor()
  local at = M.at_cursor()
  if not at or at.file.state ~= 'modified' or #(at.file.hunks or {}) == 0 then
    vim.notify('pi_lsp: put the cursor on a modified text file or its hunks', vim.log.levels.WARN)
    return nil
  end
  local entry = at.file
  M.open_at_cursor()
  local target, file_win = api.nvim_get_current_buf(), api.nvim_get_current_win()
  local name = 'pi://undone/' .. relative(entry.path)
  local scratch = vim.fn.bufnr('^' .. vim.fn.escape(name, '\\^$.*~[]') .. '$')
  if scratch == -1 then
    scratch = api.nvim_create_buf(false, true)
    api.nvim_buf_set_name(scratch, name)
    vim.bo[scratch].buftype = 'nofile'
    vim.bo[scratch].bufhidden = 'wipe'
    vim.bo[scratch].swapfile = false
    api.nvim_create_autocmd('BufWinLeave', {
      buffer = scratch,
      callback = function()
        if api.nvim_win_is_valid(file_win) then
          api.nvim_win_call(file_win, function()
            vim.cmd('diffoff')
          end)
        end
      end,
    })
  end
  vim.bo[scratch].modifiable = true
  api.nvim_buf_set_lines(scratch, 0, -1, false, M.undone_lines(target, entry.hunks))
  vim.bo[scratch].modifiable = false
  vim.bo[scratch].filetype = vim.bo[target].filetype
  vim.cmd('diffthis')
  vim.cmd('leftabove vsplit')
  api.nvim_win_set_buf(0, scratch)
  vim.cmd('diffthis')
  api.nvim_set_current_win(file_win)
  return scratch
end

--- Parse :PiChanges arguments: a number is the turn, `external` (or any other word: a session
--- id) the session. Returns (session or nil, turn or nil) or (nil, nil, message).
function M.parse_args(args)
  local session, turn = nil, nil
  for _, arg in ipairs(args or {}) do
    if arg:match('^%d+$') then
      turn = tonumber(arg)
    elseif arg ~= '' then
      session = arg
    end
  end
  return session, turn
end

--- :PiChanges [external|{sessionId}] [{turn}]: show the change set of the last prompt's session
--- (`external` when no prompt ran: the `pi/executeToolCall` calls), the whole session unless a
--- turn is given. Opens (or reuses) the `pi://changes` window.
function M.open(args)
  local session, turn = M.parse_args(args)
  session = session or require('pi_lsp.run').session_id or M.EXTERNAL
  local c = client()
  if not c then
    return false
  end
  M.state = { session = session, turn = turn, root = c.config and c.config.root_dir, rows = {}, messages = {},
    files = nil, pending = 0 }
  local b = buffer()
  local shown = false
  for _, win in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(win) == b then
      api.nvim_set_current_win(win)
      shown = true
    end
  end
  if not shown then
    vim.cmd('botright split')
    api.nvim_win_set_buf(0, b)
  end
  render()
  return M.refresh()
end

--- After a prompt: `done(count)` with the number of files that prompt changed (its turns,
--- `pi/changes {prompt = currentPrompt}`), for the transcript's `N files changed — :PiChanges`
--- line; nothing on an error. A run that changed nothing (a failed model call) gets no line,
--- not the earlier prompts' count. A journal that records no prompts: the session's files.
function M.count_files(session, done)
  local c = client_mod.current()
  if not c or not session then
    return
  end
  client_mod.request(c, 'pi/changes', { sessionId = session }, function(err, result)
    if err or type(result) ~= 'table' then
      return
    end
    local prompt = tonumber(result.currentPrompt)
    if not prompt then
      done(#(result.files or {}))
      return
    end
    client_mod.request(c, 'pi/changes', { sessionId = session, prompt = prompt }, function(err_p, of_prompt)
      if not err_p and type(of_prompt) == 'table' then
        done(#(of_prompt.files or {}))
      end
    end)
  end)
end

return M

--- pi_lsp.transcript: the `pi://transcript` buffer people read (issue 15), fed by `pi/event`,
--- and the `pi://log` buffer of :PiLog.
---
--- The transcript is Markdown (`syntax=markdown`): the prompt as a `> ` quote, the assistant's
--- text as it streams. Each tool call is a block: one readable header line and indented details
--- that fold under it once the call has finished (`foldmethod=expr`, closed by default):
---
---   `● bash python3 -m unittest -q`        running (not folded: the live output tail shows)
---   `⏳ bash rm -rf build`                  waiting for the user's approval
---   `✓ edit textkit/slug.py · allowed once` done; `✗ ...` failed (marked as an error)
---   `  path: a.py`, `  $ make test`        the call's arguments, readable
---   `  --- a/... +++ ... @@ ... -old +new`  an edit's patch (`details.patch`), diff-highlighted
---   `  │ output line`                       the result text (while running: the last lines)
---   `  approval: ...`                      the question and its outcome
---
--- The run ends with `— done —`, `— aborted —` or `— error: reason —`. Handler notes (saved,
--- reloaded, refused) go into the running block, else at the end.
local config = require('pi_lsp.config')

local M = {}

local api = vim.api
local scratch_buffers = require('pi_lsp.scratch')
local NAME = 'pi://transcript'
local LOG_NAME = 'pi://log'
local NS = api.nvim_create_namespace('pi_lsp_transcript')
local HL = api.nvim_create_namespace('pi_lsp_transcript_hl')
local ARGS_CHARS = 500
local SUMMARY_CHARS = 100
local TAIL_LINES = 8

local GLYPH = { running = '●', waiting = '⏳', ok = '✓', error = '✗' }

--- The fold expression: a finished call's header starts a fold, its indented lines stay in it,
--- everything else (text, running calls, blank lines) is level 0.
M.FOLDEXPR = [[getline(v:lnum)=~#'^\(✓\|✗\) '?'>1':(getline(v:lnum)=~#'^\s'?'=':'0')]]
M.FOLDTEXT = [[getline(v:foldstart).'  ['.(v:foldend-v:foldstart).' lines]']]

for group, link in pairs({
  PiLspRunning = 'WarningMsg',
  PiLspWaiting = 'WarningMsg',
  PiLspOk = 'Function',
  PiLspError = 'ErrorMsg',
  PiLspDetail = 'Comment',
  PiLspOutput = 'Normal',
  PiLspDiffAdd = 'DiffAdd',
  PiLspDiffDelete = 'DiffDelete',
  PiLspDiffHunk = 'DiffChange',
  PiLspApproval = 'WarningMsg',
  PiLspEnd = 'Title',
  PiLspChangesLink = 'Directory',
}) do
  vim.cmd(string.format('highlight default link %s %s', group, link))
end

local in_text = false
local log_lines = {}

--- Tool blocks by toolCallId: `{header = extmark id, n = detail line count, summary, state,
--- suffix, tail = live output line count, approval = index of the approval line or nil}`.
local blocks = {}
--- toolCallIds of running calls, in start order.
local running = {}

--- Window options that make the transcript readable (folds per tool call, wrapped text).
function M.setup_window(win)
  vim.wo[win].foldmethod = 'expr'
  vim.wo[win].foldexpr = M.FOLDEXPR
  vim.wo[win].foldtext = M.FOLDTEXT
  vim.wo[win].foldlevel = 0
  vim.wo[win].foldenable = true
  vim.wo[win].wrap = true
  vim.wo[win].linebreak = true
end

--- The transcript buffer (created when missing).
function M.buffer()
  local b, created = scratch_buffers.named(NAME, 'pi_transcript')
  if created then
    vim.bo[b].syntax = 'markdown'
    api.nvim_create_autocmd('BufWinEnter', {
      buffer = b,
      callback = function()
        M.setup_window(api.nvim_get_current_win())
      end,
    })
    -- <CR> on a `N files changed — :PiChanges` line opens the review; elsewhere it moves down as usual
    vim.keymap.set('n', '<CR>', function()
      if api.nvim_get_current_line():find(M.CHANGES_LINK .. '$') then
        require('pi_lsp').changes({})
      else
        vim.cmd('normal! ' .. vim.v.count1 .. '+')
      end
    end, { buffer = b, silent = true, desc = 'pi_lsp: open :PiChanges from its line' })
    blocks, running, in_text = {}, {}, false
  end
  return b
end

--- The end of the transcript line that links the review (`N files changed — :PiChanges`).
M.CHANGES_LINK = ' changed — :PiChanges'

--- After a prompt that changed files: `N file(s) changed — :PiChanges` (<CR> on it opens it).
function M.changes_link(count)
  M.line(string.format('%d file%s', count, count == 1 and '' or 's') .. M.CHANGES_LINK, 'PiLspChangesLink')
end

--- The transcript's lines (for tests and scripts).
function M.lines()
  return api.nvim_buf_get_lines(M.buffer(), 0, -1, false)
end

local function set_lines(b, first, last, lines)
  vim.bo[b].modifiable = true
  api.nvim_buf_set_lines(b, first, last, false, lines)
  vim.bo[b].modifiable = false
end

local function highlight(b, row, group)
  if group then
    api.nvim_buf_add_highlight(b, HL, group, row, 0, -1)
  end
end

local function scroll(b)
  for _, win in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(win) == b then
      pcall(api.nvim_win_set_cursor, win, { api.nvim_buf_line_count(b), 0 })
    end
  end
end

local function is_empty(b)
  return api.nvim_buf_line_count(b) == 1 and api.nvim_buf_get_lines(b, 0, 1, false)[1] == ''
end

local function split(text)
  return vim.split(tostring(text), '\n', { plain = true })
end

--- Append lines at the end; returns the row of the first.
local function append(lines, group)
  local b = M.buffer()
  local first
  if is_empty(b) then
    first = 0
    set_lines(b, 0, 1, lines)
  else
    first = api.nvim_buf_line_count(b)
    set_lines(b, -1, -1, lines)
  end
  for i = 0, #lines - 1 do
    highlight(b, first + i, group)
  end
  scroll(b)
  return first
end

local function last_line()
  local b = M.buffer()
  local n = api.nvim_buf_line_count(b)
  return api.nvim_buf_get_lines(b, n - 1, n, false)[1] or ''
end

--- A blank line before a new section, unless the transcript is empty or ends with one.
local function separate()
  if not is_empty(M.buffer()) and last_line() ~= '' then
    append({ '' })
  end
end

--- Append one line (ends streamed assistant text first). `group` highlights it.
function M.line(text, group)
  in_text = false
  append(split(text), group)
end

--- An error line (`!! message`), marked as an error.
function M.error(text)
  in_text = false
  separate()
  append(split('!! ' .. tostring(text)), 'PiLspError')
end

--- The prompt as a Markdown quote.
function M.prompt(text)
  in_text = false
  separate()
  local lines = {}
  for _, line in ipairs(split(text)) do
    table.insert(lines, '> ' .. line)
  end
  append(lines)
end

local QUEUED_MARKS = { steer = '[steering]', queue = '[queued]' }

--- A message for the running agent (`how`: `'steer'` or `'queue'`, see `pi_lsp.steering`) as the
--- user's Markdown quote, its first line marked `[steering]` / `[queued]`.
function M.queued(text, how)
  in_text = false
  separate()
  local lines = {}
  for i, line in ipairs(split(text)) do
    table.insert(lines, '> ' .. (i == 1 and (QUEUED_MARKS[how] or '[queued]') .. ' ' or '') .. line)
  end
  append(lines)
end

local function header_row(block)
  local pos = api.nvim_buf_get_extmark_by_id(M.buffer(), NS, block.header, {})
  return pos[1]
end

local function header_text(block)
  return GLYPH[block.state] .. ' ' .. block.summary .. (block.suffix or '')
end

local HEADER_HL = { running = 'PiLspRunning', waiting = 'PiLspWaiting', ok = 'PiLspOk', error = 'PiLspError' }

local function redraw_header(block)
  local b = M.buffer()
  local row = header_row(block)
  local old = api.nvim_buf_get_lines(b, row, row + 1, false)[1] or ''
  vim.bo[b].modifiable = true
  api.nvim_buf_set_text(b, row, 0, row, #old, { header_text(block) })
  vim.bo[b].modifiable = false
  api.nvim_buf_clear_namespace(b, HL, row, row + 1)
  highlight(b, row, HEADER_HL[block.state])
end

--- Insert detail `lines` (already indented) into `block` at detail index `at` (1-based; default:
--- after the last), replacing `replace` lines there. `groups[i]` highlights line i.
local function put_details(block, lines, groups, at, replace)
  local b = M.buffer()
  local row = header_row(block)
  at = at or block.n + 1
  replace = replace or 0
  local first = row + at
  set_lines(b, first, first + replace, lines)
  for i = 1, #lines do
    highlight(b, first + i - 1, groups and groups[i] or 'PiLspDetail')
  end
  block.n = block.n + #lines - replace
  scroll(b)
end

local function cut(text, limit)
  text = tostring(text or '')
  if vim.fn.strchars(text) <= limit then
    return text
  end
  return vim.fn.strcharpart(text, 0, limit) .. '…'
end

local function first_line(text)
  local line = tostring(text or ''):match('^[^\n]*') or ''
  if line ~= tostring(text or '') then
    line = line .. ' …'
  end
  return line
end

local function json(value)
  local encode = (vim.json and vim.json.encode) or vim.fn.json_encode
  local ok, text = pcall(encode, value)
  return ok and text or vim.inspect(value)
end

--- One readable line for a call: `bash python3 -m unittest -q`, `edit textkit/slug.py`.
function M.summary(name, args)
  args = type(args) == 'table' and args or {}
  name = tostring(name)
  local function str(key)
    return type(args[key]) == 'string' and args[key] or nil
  end
  local text
  if name == 'bash' then
    text = first_line(str('command') or '')
  elseif name == 'grep' or name == 'find' then
    text = (str('pattern') or '') .. (str('path') and (' in ' .. str('path')) or '')
  elseif name == 'ls' then
    text = str('path') or '.'
  elseif str('path') then
    text = str('path')
  else
    local encoded = json(args)
    text = encoded ~= '{}' and encoded or ''
  end
  return cut(vim.trim(name .. ' ' .. text), SUMMARY_CHARS)
end

--- The arguments of a call as readable detail lines: `  path: a.py`, a bash command as
--- `  $ line` lines, an edit's replacements counted (the diff shows them), other values as JSON.
function M.argument_lines(name, args)
  if type(args) ~= 'table' then
    return { '  arguments: ' .. cut(json(args), ARGS_CHARS) }
  end
  local lines = {}
  if name == 'bash' and type(args.command) == 'string' then
    for _, line in ipairs(split(args.command)) do
      table.insert(lines, '  $ ' .. line)
    end
  end
  local keys = vim.tbl_keys(args)
  table.sort(keys)
  for _, key in ipairs(keys) do
    local value = args[key]
    if not (name == 'bash' and key == 'command') then
      if name == 'edit' and key == 'edits' and type(value) == 'table' then
        table.insert(lines, string.format('  edits: %d replacement(s)', #value))
      elseif type(value) == 'string' and not value:find('\n', 1, true) then
        table.insert(lines, '  ' .. key .. ': ' .. cut(value, ARGS_CHARS))
      else
        table.insert(lines, '  ' .. key .. ': ' .. cut(json(value), ARGS_CHARS))
      end
    end
  end
  if #lines == 0 then
    lines = { '  (no arguments)' }
  end
  return lines
end

local function result_text(result)
  local out = {}
  for _, block in ipairs(type(result) == 'table' and type(result.content) == 'table' and result.content or {}) do
    if type(block) == 'table' and block.type == 'text' and type(block.text) == 'string' then
      table.insert(out, block.text)
    elseif type(block) == 'table' and block.type == 'image' then
      table.insert(out, '[image]')
    end
  end
  return table.concat(out, '')
end

local function output_lines(text)
  local lines = {}
  local parts = split((tostring(text):gsub('\n$', '')))
  for _, line in ipairs(parts) do
    table.insert(lines, '  │ ' .. line)
  end
  return lines
end

--- The diff lines of an edit's `details.patch` (headers, hunks, +/- lines) with their groups.
local function patch_lines(patch)
  local lines, groups = {}, {}
  for _, line in ipairs(split((patch:gsub('\n$', '')))) do
    local group = 'PiLspDetail'
    if line:sub(1, 3) == '+++' or line:sub(1, 3) == '---' then
      group = 'PiLspDetail'
    elseif line:sub(1, 1) == '+' then
      group = 'PiLspDiffAdd'
    elseif line:sub(1, 1) == '-' then
      group = 'PiLspDiffDelete'
    elseif line:sub(1, 2) == '@@' then
      group = 'PiLspDiffHunk'
    end
    table.insert(lines, '  ' .. line)
    table.insert(groups, group)
  end
  return lines, groups
end

local function remove_running(id)
  for i, other in ipairs(running) do
    if other == id then
      table.remove(running, i)
      return
    end
  end
end

function M.tool_start(event)
  in_text = false
  local id = tostring(event.toolCallId)
  local block = { n = 0, summary = M.summary(event.toolName, event.args), state = 'running', tail = 0 }
  local row = append({ header_text(block) }, 'PiLspRunning')
  block.header = api.nvim_buf_set_extmark(M.buffer(), NS, row, 0, {})
  blocks[id] = block
  table.insert(running, id)
  put_details(block, M.argument_lines(event.toolName, event.args))
end

--- Live output of a running call (`tool_execution_update`'s `output`: text new since the last
--- update): the last TAIL_LINES lines stay visible under the running header.
function M.tool_update(event)
  local block = blocks[tostring(event.toolCallId)]
  if not block or type(event.output) ~= 'string' or event.output == '' then
    return
  end
  local output = (block.output or '') .. event.output
  if #output > 8192 then
    output = output:sub(-8192):gsub('^[^\n]*\n', '', 1) -- keep whole lines
  end
  block.output = output
  local all = split((output:gsub('\n$', '')))
  local shown, groups = {}, {}
  if #all > TAIL_LINES then
    table.insert(shown, '  │ …')
  end
  for i = math.max(1, #all - TAIL_LINES + 1), #all do
    table.insert(shown, '  │ ' .. all[i])
  end
  for i = 1, #shown do
    groups[i] = 'PiLspOutput'
  end
  put_details(block, shown, groups, block.n - block.tail + 1, block.tail)
  block.tail = #shown
end

function M.tool_end(event)
  local id = tostring(event.toolCallId)
  local block = blocks[id]
  if not block then
    M.tool_start(event)
    block = blocks[id]
  end
  remove_running(id)
  local result = type(event.result) == 'table' and event.result or {}
  local lines, groups = {}, {}
  local details = type(result.details) == 'table' and result.details or {}
  if not event.isError and type(details.patch) == 'string' and details.patch ~= '' then
    lines, groups = patch_lines(details.patch)
  end
  local text = result_text(result)
  for _, line in ipairs(output_lines(text ~= '' and text or '(no output)')) do
    table.insert(lines, line)
    table.insert(groups, event.isError and 'PiLspError' or 'PiLspOutput')
  end
  put_details(block, lines, groups, block.n - block.tail + 1, block.tail)
  block.tail = 0
  block.state = event.isError and 'error' or 'ok'
  redraw_header(block)
end

local function block_of(id)
  return id and blocks[tostring(id)] or nil
end

--- `approval_requested`: the call waits for the user (header ⏳, a detail line).
function M.approval_requested(event)
  local block = block_of(event.toolCallId)
  local text = '  approval: ' .. tostring(event.title or event.toolName) .. ' — waiting for your answer'
  if not block then
    M.line(text, 'PiLspWaiting')
    return
  end
  block.state = 'waiting'
  redraw_header(block)
  put_details(block, { text }, { 'PiLspWaiting' })
  block.approval = block.n
end

--- The outcome of an approval in words: `allowed once`, `denied by you`, `timed out: denied`.
function M.approval_outcome(event)
  local decision = event.decision == 'allow' and 'allowed' or 'denied'
  local by = event.by
  if by == 'user' then
    if event.decision == 'allow' then
      return event.scope == 'session' and 'allowed for this session' or 'allowed once'
    end
    return 'denied by you'
  elseif by == 'timeout' then
    return string.format('approval timed out (%s): %s', tostring(event.reason or 'no answer'), decision)
  elseif by == 'aborted' or by == 'cancelled' then
    return string.format('approval withdrawn (%s): %s', by, decision)
  end
  return string.format('%s without asking (%s)', decision, tostring(event.reason or by))
end

--- `approval_resolved`: the outcome on the header and in place of the waiting line.
function M.approval_resolved(event)
  local outcome = M.approval_outcome(event)
  local group = event.decision == 'allow' and 'PiLspDetail' or 'PiLspError'
  local block = block_of(event.toolCallId)
  if not block then
    M.line('  approval: ' .. outcome, group)
    return
  end
  block.suffix = ' · ' .. outcome
  if block.state == 'waiting' then
    block.state = 'running'
  end
  redraw_header(block)
  local line = '  approval: ' .. outcome
  if block.approval then
    put_details(block, { line }, { group }, block.approval, 1)
  else
    put_details(block, { line }, { group })
  end
end

--- A note from a handler (saved, reloaded, refused): into the running call, else at the end.
function M.note(text)
  local lines = {}
  for _, line in ipairs(split(text)) do
    table.insert(lines, '  ' .. line)
  end
  local block = block_of(running[#running])
  if block then
    put_details(block, lines, nil, block.n - block.tail + 1)
  else
    M.line(table.concat(lines, '\n'), 'PiLspDetail')
  end
end

--- Stream assistant text: appended to the current text line, newlines start new lines.
function M.stream(text)
  if text == nil or text == '' then
    return
  end
  local b = M.buffer()
  if not in_text then
    -- a blank line before the text (Markdown would continue a `>` quote into it), and a line
    -- of its own to stream into
    if not is_empty(b) then
      append(last_line() == '' and { '' } or { '', '' })
    end
    in_text = true
  end
  local pieces = split(text)
  local last = api.nvim_buf_line_count(b)
  local current = api.nvim_buf_get_lines(b, last - 1, last, false)[1] or ''
  pieces[1] = current .. pieces[1]
  set_lines(b, last - 1, last, pieces)
  scroll(b)
end

local END_WORDS = { stop = 'done', aborted = 'aborted', length = 'stopped: the model reached its output limit' }

--- `agent_end`: the final state of the run.
function M.run_end(event)
  in_text = false
  separate()
  local reason = event.stopReason
  if reason == 'error' then
    append({ '— error: ' .. tostring(event.errorMessage or 'the run failed') .. ' —' }, 'PiLspError')
  else
    append({ '— ' .. (END_WORDS[reason] or tostring(reason)) .. ' —' }, reason == 'aborted' and 'PiLspError' or 'PiLspEnd')
  end
  for _, id in ipairs(running) do
    local block = blocks[id]
    if block then
      block.state = 'error'
      redraw_header(block)
    end
  end
  running = {}
end

--- The functions above that write the transcript do nothing once Neovim exits (`v:exiting` is
--- set). Killed by a signal (SIGTERM, SIGHUP: its terminal went away), Neovim first closes the
--- memory lines of every unmodified buffer, this one included, then runs its VimLeavePre
--- handlers; Neovim 0.7's LSP exit handler waits there up to 500 ms for the server, which ends
--- the run and sends its last events (an open approval resolved, the tool call ended). Writing
--- them into the closed buffer failed with `E440: undo line missing` and `start_row out of
--- bounds`; nobody would see them anyway. Otherwise each first makes sure the buffer exists.
for _, name in ipairs({
  'line', 'error', 'prompt', 'queued', 'changes_link', 'tool_start', 'tool_update', 'tool_end',
  'approval_requested', 'approval_resolved', 'note', 'stream', 'run_end',
}) do
  local write = M[name]
  M[name] = function(...)
    if vim.v.exiting == vim.NIL then
      M.buffer() -- a transcript the user deleted (`:bdelete`) starts afresh before `blocks` is read
      return write(...)
    end
  end
end

--- Show the transcript in a split (unless a window shows it already); the cursor stays put.
function M.open()
  local b = M.buffer()
  for _, win in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(win) == b then
      return win
    end
  end
  local current = api.nvim_get_current_win()
  vim.cmd(config.get().transcript_split)
  local win = api.nvim_get_current_win()
  api.nvim_win_set_buf(win, b)
  M.setup_window(win)
  scroll(b)
  api.nvim_set_current_win(current)
  return win
end

--- The `pi/event` handler: params `{sessionId, event}`.
function M.on_event(_, params, _)
  local event = type(params) == 'table' and params.event or nil
  if type(event) ~= 'table' then
    return
  end
  local kind = event.type
  if kind == 'message_update' then
    local delta = event.delta or {}
    if delta.type == 'text' then
      M.stream(delta.text)
    end
  elseif kind == 'message_end' then
    local message = event.message or {}
    in_text = false
    if message.role == 'assistant' and message.stopReason == 'error' then
      M.error(message.errorMessage or 'the model call failed')
    end
  elseif kind == 'tool_execution_start' then
    M.tool_start(event)
  elseif kind == 'tool_execution_update' then
    M.tool_update(event)
  elseif kind == 'tool_execution_end' then
    M.tool_end(event)
  elseif kind == 'approval_requested' then
    M.approval_requested(event)
  elseif kind == 'approval_resolved' then
    M.approval_resolved(event)
  elseif kind == 'pi_file_saved' then
    M.note('saved ' .. tostring(event.path or event.uri))
  elseif kind == 'agent_end' then
    M.run_ended = true
    M.run_end(event)
  end
end

--- Record one :PiLog line (kept to `log_lines`).
function M.log(text)
  for _, line in ipairs(split(text)) do
    table.insert(log_lines, os.date('%H:%M:%S ') .. line)
  end
  local limit = config.get().log_lines
  while #log_lines > limit do
    table.remove(log_lines, 1)
  end
end

local LEVELS = { 'ERROR', 'WARN', 'INFO', 'LOG' }

--- `window/logMessage`: pi-lsp sends its log this way (not stderr, which Neovim's LSP log shows
--- as errors). Every line goes to :PiLog; errors and warnings also go to Neovim's LSP log with
--- their own level (Neovim's default handler), so :LspLog holds real problems only.
function M.on_log_message(err, params, ctx)
  if type(params) == 'table' then
    M.log(string.format('[%s] %s', LEVELS[params.type] or '?', tostring(params.message)))
    local default = vim.lsp.handlers['window/logMessage']
    if (params.type == 1 or params.type == 2) and default and default ~= M.on_log_message then
      pcall(default, err, params, ctx)
    end
  end
end

--- `window/showMessage`: shown with vim.notify (several settings problems come as one message of
--- several lines). Not added to :PiLog: pi-lsp logs everything it shows, as window/logMessage.
function M.on_show_message(_, params, _)
  if type(params) == 'table' then
    local level = ({ vim.log.levels.ERROR, vim.log.levels.WARN, vim.log.levels.INFO })[params.type] or vim.log.levels.INFO
    vim.notify('pi-lsp: ' .. tostring(params.message), level)
  end
end

--- :PiLog: the log buffer in a split (refreshed each time).
function M.open_log()
  local b = scratch_buffers.named(LOG_NAME, 'pi_log')
  local lines = vim.deepcopy(log_lines)
  table.insert(lines, 1, 'pi-lsp log (window/logMessage); Neovim LSP log: ' .. vim.lsp.get_log_path())
  set_lines(b, 0, -1, lines)
  vim.cmd(config.get().transcript_split)
  api.nvim_win_set_buf(0, b)
  return b
end

--- The log lines kept so far.
function M.log_lines()
  return vim.deepcopy(log_lines)
end

return M

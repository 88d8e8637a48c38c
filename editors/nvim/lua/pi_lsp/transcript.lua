--- pi_lsp.transcript: the `pi://transcript` buffer fed by `pi/event` (design.md section 6), and
--- the `pi://log` buffer of :PiLog (the server's window/logMessage and window/showMessage).
---
--- Transcript lines, one per thing that happened:
---   `> prompt`                          the prompt sent by :Pi (first line of it)
---   `assistant text ...`                streamed from `message_update` text deltas
---   `tool read {"path":"a.txt"}`        `tool_execution_start`: the name and arguments (JSON)
---   `  ok: first line of the result`    `tool_execution_end` (`error:` when isError)
---   `  approval asked: ...`, `  saved a.py`, `  edit refused: ...`   notes from the handlers
---                                   (approvals are shown by the request handler, not the
---                                   `pi_approval_request` event, so they are not doubled)
---   `-- done (stop) --`                 `agent_end` with its stopReason
---   `!! ...`                            errors: a failed prompt, the server exiting mid-run
local config = require('pi_lsp.config')

local M = {}

local api = vim.api
local NAME = 'pi://transcript'
local LOG_NAME = 'pi://log'
local ARGS_CHARS = 200
local RESULT_CHARS = 160

local in_text = false
local log_lines = {}

local scratch_bufs = {}

local function scratch(name, filetype)
  local b = scratch_bufs[name]
  if b and api.nvim_buf_is_valid(b) then
    return b
  end
  b = api.nvim_create_buf(false, true)
  api.nvim_buf_set_name(b, name)
  vim.bo[b].buftype = 'nofile'
  vim.bo[b].bufhidden = 'hide'
  vim.bo[b].swapfile = false
  vim.bo[b].filetype = filetype
  vim.bo[b].modifiable = false
  scratch_bufs[name] = b
  return b
end

--- The transcript buffer (created when missing).
function M.buffer()
  return scratch(NAME, 'pi_transcript')
end

--- The transcript's lines (for tests and :PiLog).
function M.lines()
  return api.nvim_buf_get_lines(M.buffer(), 0, -1, false)
end

local function set_lines(b, first, last, lines)
  vim.bo[b].modifiable = true
  api.nvim_buf_set_lines(b, first, last, false, lines)
  vim.bo[b].modifiable = false
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

--- Append one line (ends streamed assistant text first).
function M.line(text)
  local b = M.buffer()
  in_text = false
  local lines = vim.split(tostring(text), '\n', { plain = true })
  if is_empty(b) then
    set_lines(b, 0, 1, lines)
  else
    set_lines(b, -1, -1, lines)
  end
  scroll(b)
end

--- A note from a handler (indented under the tool call it belongs to).
function M.note(text)
  M.line('  ' .. tostring(text):gsub('\n', '\n  '))
end

--- Stream assistant text: appended to the current text line, newlines start new lines.
function M.stream(text)
  if text == nil or text == '' then
    return
  end
  local b = M.buffer()
  if not in_text then
    M.line('')
    in_text = true
  end
  local pieces = vim.split(text, '\n', { plain = true })
  local last = api.nvim_buf_line_count(b)
  local current = api.nvim_buf_get_lines(b, last - 1, last, false)[1] or ''
  pieces[1] = current .. pieces[1]
  set_lines(b, last - 1, last, pieces)
  scroll(b)
end

local function cut(text, limit)
  text = tostring(text or '')
  if #text <= limit then
    return text
  end
  return text:sub(1, limit) .. '…'
end

local function result_text(result)
  local out = {}
  for _, block in ipairs(type(result) == 'table' and result.content or {}) do
    if type(block) == 'table' and block.type == 'text' and type(block.text) == 'string' then
      table.insert(out, block.text)
    end
  end
  return table.concat(out, '')
end

local function json(value)
  local encode = (vim.json and vim.json.encode) or vim.fn.json_encode
  local ok, text = pcall(encode, value)
  return ok and text or vim.inspect(value)
end

--- Show the transcript in a split (unless a window shows it already); the cursor stays put.
function M.open()
  local b = M.buffer()
  for _, win in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(win) == b then
      return
    end
  end
  local current = api.nvim_get_current_win()
  vim.cmd(config.get().transcript_split)
  api.nvim_win_set_buf(0, b)
  scroll(b)
  api.nvim_set_current_win(current)
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
      M.line('!! ' .. tostring(message.errorMessage or 'the model call failed'))
    end
  elseif kind == 'tool_execution_start' then
    M.line(string.format('tool %s %s', tostring(event.toolName), cut(json(event.args), ARGS_CHARS)))
  elseif kind == 'tool_execution_end' then
    local text = result_text(event.result):gsub('\n.*', '')
    M.line(string.format('  %s: %s', event.isError and 'error' or 'ok', cut(text, RESULT_CHARS)))
  elseif kind == 'pi_file_saved' then
    M.note('saved ' .. tostring(event.path or event.uri))
  elseif kind == 'agent_end' then
    M.line(string.format('-- done (%s) --', tostring(event.stopReason)))
  end
end

--- Record one :PiLog line (kept to `log_lines`).
function M.log(text)
  for _, line in ipairs(vim.split(tostring(text), '\n', { plain = true })) do
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

function M.on_show_message(_, params, _)
  if type(params) == 'table' then
    M.log(string.format('[%s] %s', LEVELS[params.type] or '?', tostring(params.message)))
    local level = ({ vim.log.levels.ERROR, vim.log.levels.WARN, vim.log.levels.INFO })[params.type] or vim.log.levels.INFO
    vim.notify('pi-lsp: ' .. tostring(params.message), level)
  end
end

--- :PiLog: the log buffer in a split (refreshed each time).
function M.open_log()
  local b = scratch(LOG_NAME, 'pi_log')
  local lines = vim.deepcopy(log_lines)
  table.insert(lines, 1, 'pi-lsp log (window/logMessage, window/showMessage); Neovim LSP log: ' .. vim.lsp.get_log_path())
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

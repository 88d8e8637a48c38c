--- pi_lsp.prompt_buffer: `:Pi` without text opens `pi://prompt`, a scratch buffer to write a
--- longer prompt in (Markdown). `:w` or `<CR>` in Normal mode sends its whole text as `:Pi` would
--- (with the selection of the `:Pi` range, if any) and empties it; `q` closes it. The buffer is
--- kept (hidden) between prompts, so an unsent draft survives closing the window. While the agent
--- runs, sending asks to steer or queue the text (`pi_lsp.steering`); `<LocalLeader>s` steers and
--- `<LocalLeader>q` queues without asking. The text is emptied only once it was sent.
local M = {}

local api = vim.api
local NAME = 'pi://prompt'

local bufnr = nil
--- The selection given to the `:Pi` that opened the buffer (sent with the next prompt).
local pending_selection = nil
--- The file buffer the prompt buffer was last opened from (the user's file, for `pi_lsp.client`).
local origin_buf = nil

local function text_of(b)
  return vim.trim(table.concat(api.nvim_buf_get_lines(b, 0, -1, false), '\n'))
end

--- Send the buffer's text; returns true when the prompt was sent (then the buffer is emptied).
--- While a run is active `how` (`'steer'`, `'queue'`) sends it so; without `how` the user is
--- asked (returns false, 'asked'; the buffer is emptied once it was sent).
function M.send(how)
  if not bufnr or not api.nvim_buf_is_valid(bufnr) then
    return false
  end
  local text = text_of(bufnr)
  if text == '' then
    vim.notify('pi_lsp: the prompt is empty', vim.log.levels.WARN)
    return false
  end
  local b = bufnr
  local function sent()
    pending_selection = nil
    if api.nvim_buf_is_valid(b) and text_of(b) == text then
      api.nvim_buf_set_lines(b, 0, -1, false, {})
      vim.bo[b].modified = false
    end
  end
  local run = require('pi_lsp.run')
  if run.running then
    local steering = require('pi_lsp.steering')
    if how then
      return steering.send(how, text, pending_selection, sent)
    end
    steering.ask(text, pending_selection, sent)
    return false, 'asked'
  end
  local ok = run.prompt(text, pending_selection)
  if ok then
    sent()
  end
  return ok
end

--- Texts that were never sent (a run's `undelivered`): appended to the prompt buffer, one
--- paragraph each, so the user can send them again.
function M.give_back(texts)
  local b = M.buffer()
  local lines = api.nvim_buf_get_lines(b, 0, -1, false)
  if #lines == 1 and lines[1] == '' then
    lines = {}
  end
  for _, text in ipairs(texts) do
    if #lines > 0 then
      table.insert(lines, '')
    end
    vim.list_extend(lines, vim.split(tostring(text), '\n', { plain = true }))
  end
  api.nvim_buf_set_lines(b, 0, -1, false, lines)
end

local function create()
  local b = api.nvim_create_buf(false, true)
  api.nvim_buf_set_name(b, NAME)
  vim.bo[b].buftype = 'acwrite' -- :w runs BufWriteCmd (send), never writes a file
  vim.bo[b].bufhidden = 'hide'
  vim.bo[b].swapfile = false
  vim.bo[b].filetype = 'markdown'
  api.nvim_create_autocmd('BufWriteCmd', {
    buffer = b,
    callback = function()
      M.send()
      vim.bo[b].modified = false
    end,
  })
  local opts = { buffer = b, silent = true, nowait = true }
  vim.keymap.set('n', '<CR>', function() M.send() end, vim.tbl_extend('force', opts, { desc = 'pi-lsp: send the prompt' }))
  vim.keymap.set('n', '<LocalLeader>s', function() M.send('steer') end,
    vim.tbl_extend('force', opts, { desc = "pi-lsp: steer the running agent (sent with its next model request)" }))
  vim.keymap.set('n', '<LocalLeader>q', function() M.send('queue') end,
    vim.tbl_extend('force', opts, { desc = 'pi-lsp: queue the prompt (runs when the current run ends)' }))
  vim.keymap.set('n', 'q', '<Cmd>close<CR>', vim.tbl_extend('force', opts, { desc = 'pi-lsp: close the prompt' }))
  return b
end

--- The name of the file buffer the prompt buffer `b` was opened from, or nil (`b` is not the
--- prompt buffer, or it was opened from no file).
function M.origin(b)
  if b ~= bufnr or not origin_buf or not api.nvim_buf_is_valid(origin_buf) then
    return nil
  end
  return api.nvim_buf_get_name(origin_buf)
end

--- The prompt buffer (created when missing).
function M.buffer()
  if not bufnr or not api.nvim_buf_is_valid(bufnr) then
    bufnr = create()
  end
  return bufnr
end

--- Open the prompt buffer in a window above the current one and enter it (Insert mode when it
--- is empty). `selection` (or nil) goes along with the next prompt sent from it.
function M.open(selection)
  local current = api.nvim_get_current_buf()
  local b = M.buffer()
  pending_selection = selection or pending_selection
  if current ~= b and vim.bo[current].buftype == '' and api.nvim_buf_get_name(current) ~= '' then
    origin_buf = current
  end
  local win = nil
  for _, w in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(w) == b then
      win = w
    end
  end
  if win then
    api.nvim_set_current_win(win)
  else
    vim.cmd('aboveleft 6split')
    api.nvim_win_set_buf(0, b)
  end
  if text_of(b) == '' then
    vim.cmd('startinsert')
  end
  return b
end

return M

--- pi_lsp: Neovim client for pi-lsp, the editor-side tool host of an AI coding agent.
---
--- `require('pi_lsp').setup(opts)` (options: `pi_lsp.config`) attaches every normal file buffer
--- inside a workspace root on BufReadPost/BufNewFile (not FileType, which never fires for buffers
--- without a filetype), starting one pi-lsp per root, and sends `pi/documentState` when
--- 'modified' changes (BufModifiedSet, OptionSet). The commands (plugin/pi_lsp.lua) call the functions below. See :help pi_lsp.
local config = require('pi_lsp.config')
local client_mod = require('pi_lsp.client')
local run = require('pi_lsp.run')

local M = {}

local did_setup = false

--- Configure the plugin and start attaching buffers. Safe to call again (options replaced,
--- autocommands recreated). Problems in `opts` are reported (vim.notify, WARN; `pi_lsp.config`)
--- and the valid options are kept.
function M.setup(opts)
  config.set(opts)
  did_setup = true
  local group = vim.api.nvim_create_augroup('pi_lsp', { clear = true })
  if config.get().autostart then
    vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
      group = group,
      callback = function(args)
        client_mod.attach(args.buf)
      end,
    })
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(b) and vim.api.nvim_buf_get_name(b) ~= '' then
        client_mod.attach(b)
      end
    end
  end
  -- 'modified' changes: BufModifiedSet (Neovim fires it while redrawing, so only with a UI) and
  -- OptionSet for an explicit :set [no]modified (also headless).
  local function state_changed(b)
    vim.schedule(function()
      require('pi_lsp.documents').send_state(b)
    end)
  end
  vim.api.nvim_create_autocmd('BufModifiedSet', {
    group = group,
    callback = function(args)
      state_changed(args.buf)
    end,
  })
  vim.api.nvim_create_autocmd('OptionSet', {
    group = group,
    pattern = 'modified',
    callback = function()
      state_changed(vim.api.nvim_get_current_buf())
    end,
  })
  require('pi_lsp.knowledge').setup(group)
  client_mod.exit_listeners = { run.on_client_exit }
  return M
end

--- Set up with the defaults unless `setup` ran already (the commands call this).
function M.ensure_setup()
  if not did_setup then
    M.setup({})
  end
end

--- The selection of a command range: `{path, first, last, lines}` or nil without a range.
local function selection(cmd)
  if not cmd or (cmd.range or 0) == 0 then
    return nil
  end
  local b = vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(b)
  return {
    path = name ~= '' and vim.fn.fnamemodify(name, ':.') or '[No Name]',
    first = cmd.line1,
    last = cmd.line2,
    lines = vim.api.nvim_buf_get_lines(b, cmd.line1 - 1, cmd.line2, false),
  }
end

--- :Pi {prompt} (with a range, the selected lines go along as context). Without text, the
--- prompt buffer opens (`pi_lsp.prompt_buffer`). While a run is active the user is asked to
--- steer or queue it (`pi_lsp.steering`; returns false, 'asked').
function M.prompt(text, cmd)
  M.ensure_setup()
  if text == nil or vim.trim(text) == '' then
    return require('pi_lsp.prompt_buffer').open(selection(cmd))
  end
  if run.running then
    require('pi_lsp.steering').ask(text, selection(cmd))
    return false, 'asked'
  end
  return run.prompt(text, selection(cmd))
end

--- :PiSteer {text} (`how` 'steer') and :PiQueue {text} (`how` 'queue'): send to the running
--- agent without asking; with no run active the text is an ordinary prompt.
function M.send(how, text, cmd)
  M.ensure_setup()
  if text == nil or vim.trim(text) == '' then
    return require('pi_lsp.prompt_buffer').send(how)
  end
  return require('pi_lsp.steering').send(how, text, selection(cmd))
end

--- :PiAbort.
function M.abort()
  M.ensure_setup()
  return run.abort()
end

--- :PiLog.
function M.log()
  M.ensure_setup()
  return require('pi_lsp.transcript').open_log()
end

--- :PiChanges [external|{sessionId}] [{turn}] (`pi_lsp.changes`).
function M.changes(args)
  M.ensure_setup()
  return require('pi_lsp.changes').open(args)
end

--- :PiTools [name ...].
function M.tools(names, done)
  M.ensure_setup()
  return run.tools(names, done)
end

--- Whether a prompt is running (for statuslines and scripts).
function M.is_running()
  return run.running ~= nil
end

--- A short status for statuslines: `pi: waiting for your approval: Run bash: ...`,
--- `pi: running`, or '' when idle.
function M.status()
  local waiting = require('pi_lsp.approvals').waiting()
  if waiting then
    return 'pi: waiting for your approval: ' .. waiting
  end
  return run.running and 'pi: running' or ''
end

return M

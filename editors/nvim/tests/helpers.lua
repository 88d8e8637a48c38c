-- Helpers for the headless Neovim scenarios (driven by tests/editors/test_nvim.py).
--
-- A scenario script does `local H = dofile(vim.env.PI_TEST_HELPERS)` and `H.run(function() ... end)`.
-- Checks are collected into $PI_TEST_RESULT (JSON); Neovim exits 0 when every check passed,
-- 1 when one failed and 3 when a Lua error escaped (the command line ends in `cquit 3`).
local H = { checks = {}, notes = {}, failed = false, notifications = {} }

local api = vim.api
H.uv = vim.uv or vim.loop

--- The LSP clients (of `bufnr` when given), on every version without deprecated calls.
function H.clients(bufnr)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients(bufnr and { bufnr = bufnr } or nil)
  end
  return bufnr and vim.tbl_values(vim.lsp.buf_get_clients(bufnr)) or vim.lsp.get_active_clients()
end

--- `:checkhealth {name}` as lines in one form on every version: `OK: text`, `WARNING: text`,
--- `ERROR: text`, `INFO: text` (0.7 writes `- OK: text`, 0.10+ `- ✅ OK text`).
function H.health(name)
  vim.cmd('checkhealth ' .. name)
  local out = {}
  for _, line in ipairs(api.nvim_buf_get_lines(0, 0, -1, false)) do
    local body = line:gsub('^%s*%- ', '')
    body = body:gsub('^[^%w%s]+%s+', '') -- the 0.10+ emoji
    local level, rest = body:match('^(%u+):? (.*)$')
    if level == 'OK' or level == 'WARNING' or level == 'ERROR' or level == 'INFO' then
      table.insert(out, level .. ': ' .. rest)
    else
      table.insert(out, line)
    end
  end
  local text = table.concat(out, '\n')
  vim.cmd('bwipeout!')
  return text
end

function H.check(name, ok, detail)
  table.insert(H.checks, { name = name, ok = ok and true or false, detail = (not ok) and vim.inspect(detail) or nil })
  if not ok then
    H.failed = true
  end
  return ok
end

function H.note(key, value)
  H.notes[key] = vim.inspect(value)
end

function H.wait(ms, predicate)
  return vim.wait(ms, predicate, 10)
end

function H.read(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local s = f:read('*a')
  f:close()
  return s
end

--- The buffer's text as it would be written ('eol' honoured).
function H.text(bufnr)
  local lines = api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local text = table.concat(lines, '\n')
  if vim.bo[bufnr].eol then
    text = text .. '\n'
  end
  return text
end

function H.buf(path)
  local full = vim.fn.fnamemodify(path, ':p')
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_get_name(b) == full then
      return b
    end
  end
  return nil
end

--- Record vim.notify messages (the plugin reports problems through it).
local notify = vim.notify
vim.notify = function(message, level, opts)
  table.insert(H.notifications, { message = tostring(message), level = level })
  return notify(message, level, opts)
end

function H.notified(pattern)
  for _, n in ipairs(H.notifications) do
    if n.message:find(pattern, 1, true) then
      return true
    end
  end
  return false
end

function H.transcript_has(pattern)
  for _, line in ipairs(require('pi_lsp.transcript').lines()) do
    if line:find(pattern, 1, true) then
      return true
    end
  end
  return false
end

--- True when `float` (an approval prompt or a review, or nil) is on screen and armed: its
--- type-ahead guard (`pi_lsp.typeahead`) takes keys as answers now.
function H.armed(float)
  return float ~= nil and float.win ~= nil and api.nvim_win_is_valid(float.win)
    and float.guard ~= nil and float.guard.armed
end

--- The user at the approval prompt: every 20 ms, when an armed prompt is on screen that was not handled
--- yet, record what its window shows and the status line text (`{lines, id, status, prompt}`) and type `keys_for(record)` (a key string
--- for nvim_input, or nil to leave it). Returns the list of records.
function H.approver(keys_for)
  local seen = {}
  local handled = nil
  local timer = H.uv.new_timer()
  timer:start(20, 20, vim.schedule_wrap(function()
    local prompt = require('pi_lsp.approvals').current
    if not H.armed(prompt) or prompt == handled then
      return
    end
    handled = prompt
    local record = {
      lines = api.nvim_buf_get_lines(api.nvim_win_get_buf(prompt.win), 0, -1, false),
      id = prompt.id,
      status = require('pi_lsp').status(),
      prompt = prompt,
    }
    table.insert(seen, record)
    local keys = keys_for(record)
    if keys then
      api.nvim_input(keys)
    end
  end))
  H.timers = H.timers or {}
  table.insert(H.timers, timer)
  return seen
end

--- The transcript window (opened when missing) and the row (1-based) of the first line
--- starting with `prefix`, or nil.
function H.transcript_row(prefix)
  for i, line in ipairs(require('pi_lsp.transcript').lines()) do
    if line:sub(1, #prefix) == prefix then
      return i
    end
  end
  return nil
end

--- The highlight groups on transcript row `row` (1-based).
function H.transcript_groups(row)
  local t = require('pi_lsp.transcript')
  local ns = api.nvim_create_namespace('pi_lsp_transcript_hl')
  local groups = {}
  for _, mark in ipairs(api.nvim_buf_get_extmarks(t.buffer(), ns, { row - 1, 0 }, { row - 1, -1 }, { details = true })) do
    table.insert(groups, mark[4].hl_group)
  end
  return groups
end

--- Wait for the pi-lsp client of the workspace to be initialized; returns it.
function H.client(ms)
  local client = nil
  H.wait(ms or 20000, function()
    for _, id in pairs(require('pi_lsp.client').by_root) do
      local c = vim.lsp.get_client_by_id(id)
      if c and c.initialized then
        client = c
        return true
      end
    end
    return false
  end)
  return client
end

--- The user's own language server, as a user's config starts it: `cmd` (a list) on FileType
--- `filetype`, rooted at the current directory (0.8+: `vim.lsp.start`, which reuses the client;
--- 0.7: one `vim.lsp.start_client` and `buf_attach_client`). Returns a function giving its client.
function H.autostart(name, cmd, filetype)
  local id = nil
  vim.api.nvim_create_autocmd('FileType', {
    pattern = filetype,
    callback = function(args)
      local config = { name = name, cmd = cmd, root_dir = vim.fn.getcwd() }
      if vim.fn.has('nvim-0.8') == 1 then
        id = vim.lsp.start(config, { bufnr = args.buf })
      else
        id = id or vim.lsp.start_client(config)
        vim.lsp.buf_attach_client(args.buf, id)
      end
    end,
  })
  return function()
    return id and vim.lsp.get_client_by_id(id)
  end
end

--- Call a server-request handler as Neovim does on this version (0.10+: inside a coroutine that
--- the handler may yield; 0.7: on the main loop) and wait up to `ms` for `result, err`.
function H.call_handler(handler, params, ctx, ms)
  local reply = nil
  local co = coroutine.create(function()
    local result, err = handler(nil, params, ctx)
    reply = { result = result, err = err }
  end)
  if vim.fn.has('nvim-0.10') == 1 then
    assert(coroutine.resume(co))
  else
    local result, err = handler(nil, params, ctx)
    reply = { result = result, err = err }
  end
  H.wait(ms or 20000, function() return reply ~= nil end)
  return reply or { timeout = true }
end

--- Wait until no prompt runs.
function H.wait_run(ms)
  return H.wait(ms or 30000, function()
    return not require('pi_lsp').is_running()
  end)
end

--- Write the checks and notes (with the transcript) to $PI_TEST_RESULT now.
function H.write_result()
  H.notes.transcript = require('pi_lsp.transcript').lines()
  local ok, js = pcall(vim.fn.json_encode, { failed = H.failed, checks = H.checks, notes = H.notes })
  if not ok then
    H.failed = true
    js = vim.fn.json_encode({ failed = true, json_error = tostring(js), dump = vim.inspect(H.checks) })
  end
  local f = assert(io.open(vim.env.PI_TEST_RESULT, 'wb'))
  f:write(js)
  f:close()
end

local function finish()
  for _, timer in ipairs(H.timers or {}) do
    timer:stop()
  end
  H.write_result()
  for _, id in pairs(require('pi_lsp.client').by_root) do
    vim.lsp.stop_client(id)
  end
  H.wait(3000, function()
    return next(H.clients()) == nil
  end)
  if H.failed then
    vim.cmd('cquit 1')
  else
    vim.cmd('qall!')
  end
end

function H.run(fn)
  -- a scenario that hangs still ends (with a failed check) before the outer `timeout`
  vim.defer_fn(function()
    H.check('the scenario finished within 75 s', false)
    finish()
  end, 75000)
  local ok, err = xpcall(fn, debug.traceback)
  if not ok then
    H.check('no Lua error', false, err)
  end
  finish()
end

--- Run a scenario that lets Neovim's main loop process typed keys (run it with `after_startup`):
--- `fn(done)` starts things and returns; the scenario ends when `done()` is called (from a
--- timer or callback). Errors in `fn` or in callbacks wrapped by `H.guarded` fail a check.
function H.run_async(fn)
  vim.defer_fn(function()
    H.check('the scenario finished within 75 s', false)
    finish()
  end, 75000)
  local ok, err = xpcall(fn, debug.traceback, finish)
  if not ok then
    H.check('no Lua error', false, err)
    finish()
  end
end

--- `fn` wrapped so that a Lua error fails a check and ends the scenario (for callbacks of
--- `H.run_async` scenarios).
function H.guarded(fn)
  return function(...)
    local ok, err = xpcall(fn, debug.traceback, ...)
    if not ok then
      H.check('no Lua error', false, err)
      finish()
    end
  end
end

--- A user typing `keys` (a list of nvim_input key strings) one every `every_ms`; `on_done` runs
--- after the last one.
function H.type_slowly(keys, every_ms, on_done)
  local i = 0
  local timer = H.uv.new_timer()
  timer:start(every_ms, every_ms, vim.schedule_wrap(function()
    i = i + 1
    if keys[i] then
      api.nvim_input(keys[i])
    end
    if i >= #keys then
      timer:stop()
      if on_done then
        on_done()
      end
    end
  end))
  H.timers = H.timers or {}
  table.insert(H.timers, timer)
  return timer
end

--- Every `every_ms` until `stop()` returns true, call it (a guarded timer kept in `H.timers`).
local function poll(every_ms, step)
  local timer = H.uv.new_timer()
  H.timers = H.timers or {}
  table.insert(H.timers, timer)
  timer:start(every_ms, every_ms, vim.schedule_wrap(H.guarded(function()
    if step() then
      timer:stop()
    end
  end)))
  return timer
end

--- The keys of a user who leaves insert mode and types a command with a few edits in it
--- (`:let g:typed = 'ye<Left>z<Right>sx<BS>'<CR>`, which sets `g:typed` to 'yes' when every key
--- lands as typed): what the type-ahead scenarios type over a float.
function H.typed_command_keys()
  local keys = { '<Esc>' }
  for c in (":let g:typed = 'ye"):gmatch('.') do
    table.insert(keys, c == ' ' and '<Space>' or c)
  end
  vim.list_extend(keys, { '<Left>', 'z', '<Right>', 's', 'x', '<BS>', "'", '<CR>' })
  return keys
end

--- Answer the float `prompt` with `key` once it is armed (`H.armed`), keeping its lines in
--- `seen[record]` when `record` is given, then call `after`. A float that closed before it was
--- armed fails a check (the typed keys answered it: what the guard prevents) and `after` runs.
function H.answer_when_armed(prompt, key, seen, record, after)
  poll(20, function()
    if not (prompt.win and api.nvim_win_is_valid(prompt.win)) then
      H.check('the prompt was still open after the typing stopped', false, record)
    elseif H.armed(prompt) then
      if record then
        seen[record] = api.nvim_buf_get_lines(prompt.buf, 0, -1, false)
      end
      api.nvim_input(key)
    else
      return false
    end
    if after then
      after()
    end
    return true
  end)
end

--- The end of a run of nvim_approvals.jsonl whose bash call was denied by the user (`denial`:
--- what denied it) and whose read was allowed once (the type-ahead scenarios), as the user sees it.
function H.check_denied_then_allowed_once(approvals, denial)
  H.check(denial .. ': the command did not run', H.uv.fs_stat('denied.txt') == nil)
  H.check('the transcript shows the denial by the user', H.transcript_row('✗ bash touch denied.txt · denied by you'))
  H.check('the deliberate o allowed the read once', H.transcript_row('✓ read ../outside.txt · allowed once'))
  H.check('no prompt is left', approvals.current == nil)
  H.check('the run ended normally', require('pi_lsp.run').last_reply.stopReason == 'stop',
    require('pi_lsp.run').last_reply)
end

--- After the run: call `finish_checks` once it ended and the keys given back set `g:typed` in
--- normal mode, or 100 ticks after it ended (a keystroke lost on the way never sets `g:typed`).
function H.await_typed_end(finish_checks)
  local idle = 0
  poll(20, function()
    if not require('pi_lsp').is_running() then
      idle = idle + 1
    end
    if idle > 100 or (idle > 0 and vim.g.typed ~= nil and api.nvim_get_mode().mode == 'n') then
      finish_checks()
      return true
    end
    return false
  end)
end

--- A user typing over pi-lsp's floats (the type-ahead scenarios): in insert mode at a new last
--- line, `sentence` over and over, a key every 20 ms; `:Pi {instruction}` starts at the 5th key.
--- `module.current` is the float watched (`pi_lsp.approvals` or `pi_lsp.review`). When a first
--- float appears, its lines go to `state.seen.first_held` and the typing goes on for 8 more keys;
--- then `first_key` answers it once armed (its lines then in `state.seen.first_armed`). A second
--- float is handed to `on_second`. `state.typed` is the text typed, `state.first` the first float.
function H.type_over_floats(state, module, instruction, sentence, first_key, on_second)
  api.nvim_input('Go')
  local tick, after_prompt = 0, 0
  poll(20, function()
    tick = tick + 1
    if tick == 5 then
      vim.cmd('Pi ' .. instruction)
    end
    local float = module.current
    if float and not state.first then
      state.first = float
      state.seen.first_held = api.nvim_buf_get_lines(float.buf, 0, -1, false)
    end
    if state.first then
      after_prompt = after_prompt + 1
      if after_prompt > 8 then
        H.answer_when_armed(state.first, first_key, state.seen, 'first_armed', nil)
        return true
      end
    end
    local i = (#state.typed % #sentence) + 1
    local c = sentence:sub(i, i)
    state.typed = state.typed .. c
    api.nvim_input(c == ' ' and '<Space>' or c)
    return false
  end)
  poll(20, function()
    local float = module.current
    if state.first and float and float ~= state.first and float.win then
      on_second(float)
      return true
    end
    return false
  end)
end

return H

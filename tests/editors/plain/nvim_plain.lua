-- Neovim's own LSP client, no pi-lsp plugin (issue 16), against the real daemon and pi-lsp replay.
-- Run by tests/editors/test_plain_lsp.py, for Neovim 0.7 and 0.11:
--   timeout 90 nvim --headless -u NONE -i NONE -n -c 'luafile nvim_plain.lua' -c 'cquit 3'
-- Only what a user without our plugin has: vim.lsp.start (0.8+; 0.7: start_client and
-- buf_attach_client), vim.lsp.buf.code_action and workspace/executeCommand. The user's choices in
-- menus (vim.ui.select; vim.fn.inputlist on 0.7's showMessageRequest) are answered by a stand-in
-- that records what it was shown.
-- Environment: PI_TEST_DIR (workspace holding greet.py), PI_TEST_URL (replay), PI_TEST_JOURNALS
-- (the sessions folder), PI_TEST_RESULT (JSON written at the end: {failed, checks, notes}).
-- Exit: 0 all checks passed, 1 a check failed, 3 a Lua error escaped, 124 hung (timeout).
local api = vim.api
local DIR = assert(vim.env.PI_TEST_DIR)
local RESULT = assert(vim.env.PI_TEST_RESULT)
local JOURNALS = assert(vim.env.PI_TEST_JOURNALS)
local R = { checks = {}, notes = { menus = {}, messages = {}, progress = {} } }
local failed = false
local client_id
local v011 = vim.fn.has('nvim-0.11') == 1

local function readfile(p)
  local f = io.open(p, 'rb'); if not f then return nil end
  local s = f:read('*a'); f:close(); return s
end
local function check(name, ok, detail)
  table.insert(R.checks, { name = name, ok = ok and true or false, detail = detail ~= nil and vim.inspect(detail) or nil })
  if not ok then failed = true end
end
local function text_of(b) return table.concat(api.nvim_buf_get_lines(b, 0, -1, false), '\n') .. '\n' end
local function has(list, pred) for _, x in ipairs(list) do if pred(x) then return x end end end

local function finish()
  R.failed = failed
  local f = assert(io.open(RESULT, 'wb')); f:write(vim.fn.json_encode(R)); f:close()
  if client_id then
    vim.lsp.stop_client(client_id)
    vim.wait(5000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 20)
  end
  if failed then vim.cmd('cquit 1') else vim.cmd('qall!') end
end

-- The person at the keyboard: picks a code action by title, answers approvals with "Allow once".
local want_action
vim.ui.select = function(items, opts, on_choice)
  local shown = {}
  for i, item in ipairs(items) do
    local action = type(item) == 'table' and (item.action or item[2]) or nil
    local title = action and action.title or (type(item) == 'table' and item.title) or tostring(item)
    shown[i] = title
  end
  table.insert(R.notes.menus, { kind = opts and opts.kind, items = shown })
  local wanted = (opts and opts.kind == 'codeaction') and want_action or 'Allow once'
  for i, title in ipairs(shown) do
    if title == wanted then return on_choice(items[i], i) end
  end
  on_choice(nil, nil)
end
vim.fn.inputlist = function(lines)  -- 0.7's window/showMessageRequest
  table.insert(R.notes.menus, { kind = 'inputlist', items = lines })
  for i, line in ipairs(lines) do
    if line:match('^%d+%. Allow once$') then return i - 2 end
  end
  return 0
end

local progress = {}
local handlers = {
  ['$/progress'] = function(err, result, ctx, config)
    table.insert(progress, result.value)
    return vim.lsp.handlers['$/progress'](err, result, ctx, config)
  end,
  ['window/showMessage'] = function(_, result)
    table.insert(R.notes.messages, result.message)
  end,
}
-- what statuslines listen to: LspProgress (0.10+) or User LspProgressUpdate (0.7 to 0.9)
local progress_autocmds = 0
if v011 then
  api.nvim_create_autocmd('LspProgress', { callback = function() progress_autocmds = progress_autocmds + 1 end })
else
  vim.cmd('autocmd User LspProgressUpdate lua PI_PROGRESS_UPDATE()')
  function PI_PROGRESS_UPDATE() progress_autocmds = progress_autocmds + 1 end
end
local function ended(n) return #vim.tbl_filter(function(v) return v.kind == 'end' end, progress) >= n end
local function report(pattern)
  return has(progress, function(v) return v.kind == 'report' and (v.message or ''):find(pattern) ~= nil end)
end
local function request(client, method, params, handler, bufnr)
  if v011 then return client:request(method, params, handler, bufnr) end
  return client.request(method, params, handler, bufnr)
end

local ok, err = xpcall(function()
  vim.o.hidden = true
  vim.cmd('filetype on')  -- what a user's config has (-u NONE leaves it off)
  local greet = DIR .. '/greet.py'
  local ORIGINAL = readfile(greet)
  vim.cmd('edit ' .. vim.fn.fnameescape(greet))
  local buf = api.nvim_get_current_buf()
  check('filetype python', vim.bo[buf].filetype == 'python', vim.bo[buf].filetype)
  local inited = false
  local config = {
    name = 'pi-lsp',
    cmd = { 'pi-lsp' },
    root_dir = DIR,
    init_options = { pi = {
      baseUrl = vim.env.PI_TEST_URL, model = 'replay', maxRetries = 0,
      edit = { verifyTimeoutSeconds = 10, applyTimeoutSeconds = 20 },
    } },
    handlers = handlers,
    on_init = function() inited = true end,
  }
  if vim.lsp.start then
    client_id = vim.lsp.start(config)
  else
    client_id = vim.lsp.start_client(config)
    vim.lsp.buf_attach_client(buf, client_id)
  end
  check('client started', client_id ~= nil, client_id)
  check('initialized', vim.wait(30000, function() return inited end, 20))
  local client = vim.lsp.get_client_by_id(client_id)
  local caps = client.server_capabilities or client.resolved_capabilities
  R.notes.caps = client.server_capabilities
  check('executeCommandProvider lists the pi commands', client.server_capabilities == nil or vim.deep_equal(
    client.server_capabilities.executeCommandProvider.commands, { 'pi.runInstruction', 'pi.prompt', 'pi.abort', 'pi.revertHunk', 'pi.revertTurn' }),
    client.server_capabilities and client.server_capabilities.executeCommandProvider)
  check('codeActionProvider', caps ~= nil and (caps.codeActionProvider or caps.code_action) ~= nil, caps)

  -- 1. the code action on the instruction line runs it
  api.nvim_win_set_cursor(0, { 5, 4 })
  want_action = 'Pi: run this instruction'
  vim.lsp.buf.code_action()
  check('the run ended (progress end)', vim.wait(60000, function() return ended(1) end, 20), progress)
  local menu = R.notes.menus[1]
  check('the code action menu offered the instruction',
    menu ~= nil and menu.kind == 'codeaction' and vim.tbl_contains(menu.items, 'Pi: run this instruction'), menu)
  local EDITED = 'def greet():\n    return "hi"\n\n\ndef bye():\n    return "ciao"\n'
  check('instruction removed and the agent edit in the buffer', text_of(buf) == EDITED, text_of(buf))
  check('the file on disk is untouched (the buffer is unsaved)', readfile(greet) == ORIGINAL, readfile(greet))
  check('buffer modified', vim.bo[buf].modified)

  -- progress as the client received it
  local begin = progress[1] or {}
  check('progress begins with the instruction', begin.kind == 'begin' and begin.title == 'Pi'
    and (begin.message or ''):find('make bye say ciao', 1, true) ~= nil, begin)
  check('progress reports the edit call', report('^edit: greet%.py$') ~= nil, progress)
  check('progress reports the approval wait', report('^waiting for your approval: bash') ~= nil, progress)
  check('progress reports the bash call', report('^bash: touch approved%.txt$') ~= nil, progress)
  check("the editor's own progress event fired for each notification", progress_autocmds >= #progress,
    { autocmds = progress_autocmds, notifications = #progress })
  local last = has(progress, function(v) return v.kind == 'end' end)
  check('progress ends with Done', last ~= nil and last.message == 'Done', last)

  -- the approval was asked and answered
  local asked = has(R.notes.menus, function(m)
    return m.kind == 'inputlist' or m.kind == 'lsp_message'
  end)
  check('the approval was asked with the three answers', asked ~= nil
    and vim.inspect(asked.items):find('Allow for this session', 1, true) ~= nil, R.notes.menus)
  check('the approved command ran', vim.loop.fs_stat(DIR .. '/approved.txt') ~= nil)

  -- the transcript document
  local mds = vim.fn.glob(JOURNALS .. '/*.md', false, true)
  check('one transcript file', #mds == 1, mds)
  local md = readfile(mds[1] or '') or ''
  R.notes.transcript = md
  for _, part in ipairs({ '## Prompt', '> make bye say ciao', 'Making bye say ciao.', '- `edit: greet.py`',
    '✓ edit: Successfully replaced 1 block(s) in greet.py.', '```diff', '+    return "ciao"',
    '- approval asked: bash `touch approved.txt`', '- approval: allowed bash `touch approved.txt`',
    'Done: bye says ciao.', '## Result\n\nDone\n' }) do
    check('transcript holds ' .. part, md:find(part, 1, true) ~= nil, md)
  end
  if v011 then
    -- window/showDocument opened it (in a window, without taking the focus)
    local tbuf = vim.fn.bufnr(mds[1] or '')
    check('the transcript is open in a window', tbuf > 0 and #vim.fn.win_findbuf(tbuf) > 0, tbuf)
    check('the focus stayed in greet.py', api.nvim_get_current_buf() == buf, api.nvim_buf_get_name(0))
    vim.cmd('checktime')
    check('the transcript buffer shows the final state after :checktime',
      tbuf > 0 and text_of(tbuf):find('## Result\n\nDone\n', 1, true) ~= nil, tbuf > 0 and text_of(tbuf))
  else
    check('0.7 (no showDocument) is told where the transcript is',
      has(R.notes.messages, function(m) return m:find(mds[1] or '?', 1, true) ~= nil end) ~= nil, R.notes.messages)
  end

  -- 2. review without a plugin: the code action on the agent's line takes its hunk back
  api.nvim_set_current_buf(buf)
  api.nvim_win_set_cursor(0, { 6, 4 })
  want_action = 'Pi: undo this agent hunk'
  vim.lsp.buf.code_action()
  local REVERTED = 'def greet():\n    return "hi"\n\n\ndef bye():\n    return "bye"\n'
  check('"Pi: undo this agent hunk" takes the edit back in the buffer',
    vim.wait(20000, function() return text_of(buf) == REVERTED end, 20), text_of(buf))
  local review = R.notes.menus[#R.notes.menus]
  check('the menu offered the hunk and the last turn', review.kind == 'codeaction'
    and vim.deep_equal(review.items, { 'Pi: undo this agent hunk', 'Pi: undo the last turn' }), review)

  -- 3. undo restores the file as it was before the run. Neovim groups changes into undo blocks by
  -- typed command: both server edits of this run arrive while no key is typed, so they form one
  -- block here; with a key typed between them, each is its own step.
  api.nvim_set_current_buf(buf)
  local states = {}
  for _ = 1, 2 do
    if text_of(buf) == ORIGINAL then break end
    vim.cmd('undo')
    table.insert(states, text_of(buf))
  end
  R.notes.undo_steps = #states
  check(':undo brings back the instruction and the old code', text_of(buf) == ORIGINAL, states)
  check('no intermediate undo state other than "edit undone, instruction still removed"',
    #states == 1 or states[1] == 'def greet():\n    return "hi"\n\n\ndef bye():\n    return "bye"\n', states)

  -- 4. pi.prompt by command, then abort with the code action while the approved sleep runs
  local reply
  request(client, 'workspace/executeCommand', { command = 'pi.prompt', arguments = { 'wait a while' } },
    function(e, r) reply = { err = e, result = r } end, buf)
  check('pi.prompt answered with the session', vim.wait(20000, function() return reply ~= nil end, 20)
    and reply.err == nil and type(reply.result.sessionId) == 'string', reply)
  check('the sleep was approved and started', vim.wait(30000, function()
    return report('^bash: sleep 30$') ~= nil and #vim.tbl_filter(function(m)
      return m.kind == 'inputlist' or m.kind == 'lsp_message' end, R.notes.menus) >= 2
  end, 20), progress)
  want_action = 'Pi: abort the run'
  vim.lsp.buf.code_action()
  check('the run ended after the abort', vim.wait(30000, function() return ended(2) end, 20), progress)
  local ends = vim.tbl_filter(function(v) return v.kind == 'end' end, progress)
  check('progress ends with Aborted', ends[2] ~= nil and ends[2].message == 'Aborted', ends)
  local md2 = readfile(JOURNALS .. '/' .. reply.result.sessionId .. '.md') or ''
  check('the second transcript ends Aborted', md2:find('## Result\n\nAborted\n', 1, true) ~= nil, md2)
  R.notes.progress = progress
  R.notes.version = tostring(vim.version().major .. '.' .. vim.version().minor .. '.' .. vim.version().patch)
end, debug.traceback)
if not ok then
  R.lua_error = err
  check('no Lua error', false, err)
end
finish()

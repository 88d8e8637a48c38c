-- Headless Neovim's built-in LSP client driving the real pi-lsp daemon (issue 5).
-- Run by tests/editors/test_nvim_daemon.py:
--   timeout 90 nvim --headless -u NONE -i NONE -n -c 'luafile daemon.lua' -c 'cquit 3'
-- Environment: PI_TEST_DIR (workspace, files written here), PI_TEST_PY (python), PI_TEST_REPO
-- (put on PYTHONPATH), PI_TEST_RESULT (JSON written at the end: {failed, checks, notes}).
-- Exit: 0 all checks passed, 1 a check failed, 3 a Lua error escaped, 124 hung (timeout).
local api = vim.api
local uv = vim.uv or vim.loop
local DIR = assert(vim.env.PI_TEST_DIR)
local RESULT = assert(vim.env.PI_TEST_RESULT)
local R = { checks = {}, notes = {} }
local failed = false
local client_id

local function readfile(p)
  local f = io.open(p, 'rb'); if not f then return nil end
  local s = f:read('*a'); f:close(); return s
end
local function writefile(p, s) local f = assert(io.open(p, 'wb')); f:write(s); f:close() end
local function check(name, ok, detail)
  table.insert(R.checks, { name = name, ok = ok and true or false, detail = detail ~= nil and vim.inspect(detail) or nil })
  if not ok then failed = true end
end
vim.o.hidden = true  -- agent edits leave buffers modified; switching buffers must not refuse
local function text_of(b) return table.concat(api.nvim_buf_get_lines(b, 0, -1, false), '\n') .. '\n' end

local function finish()
  local okj, js = pcall(vim.fn.json_encode, R)
  if not okj then failed = true; js = vim.fn.json_encode({ failed = true, json_error = tostring(js) }) end
  R.failed = failed
  writefile(RESULT, okj and vim.fn.json_encode(R) or js)
  if client_id then
    vim.lsp.stop_client(client_id)
    vim.wait(5000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 20)
  end
  if failed then vim.cmd('cquit 1') else vim.cmd('qall!') end
end

local ok, err = xpcall(function()
  local a_path, b_path = DIR .. '/a.txt', DIR .. '/b.txt'
  local A = 'héllo 😀 world\nsecond line\n'
  writefile(a_path, A)
  writefile(b_path, 'keep\n')

  vim.cmd('edit ' .. vim.fn.fnameescape(a_path))
  local abuf = api.nvim_get_current_buf()
  local inited = false
  client_id = vim.lsp.start_client({
    name = 'pi-lsp',
    cmd = { vim.env.PI_TEST_PY, '-m', 'pi_lsp' },
    cmd_env = { PYTHONPATH = vim.env.PI_TEST_REPO, TMPDIR = DIR .. '/..' },
    root_dir = DIR,
    init_options = { pi = { edit = { verifyTimeoutSeconds = 10, applyTimeoutSeconds = 20 } } },
    on_init = function() inited = true end,
  })
  check('client started', client_id ~= nil, client_id)
  vim.lsp.buf_attach_client(abuf, client_id)
  check('initialized', vim.wait(20000, function() return inited end, 10))
  local client = vim.lsp.get_client_by_id(client_id)

  local function call(name, arguments)
    local done, e, res = false, nil, nil
    client.request('pi/executeToolCall', { toolCall = { id = 'nvim-' .. name, name = name, arguments = arguments } },
      function(err_, result_) done, e, res = true, err_, result_ end, abuf)
    if not vim.wait(30000, function() return done end, 10) then return nil, 'timeout' end
    if e ~= nil then return nil, e end
    local text = ''
    for _, block in ipairs(res.content or {}) do if block.type == 'text' then text = text .. block.text end end
    return res, text
  end

  -- 1. an agent edit lands in the buffer (UTF-16 columns after a non-BMP character), not on disk
  local res, text = call('edit', { path = 'a.txt', edits = { { oldText = 'world', newText = 'there' } } })
  check('edit succeeded', res ~= nil and res.isError == false, text)
  check('edit is in the buffer', text_of(abuf) == 'héllo 😀 there\nsecond line\n', text_of(abuf))
  check('disk untouched (no pi/saveDocuments advertised)', readfile(a_path) == A, readfile(a_path))
  check('buffer modified', vim.bo[abuf].modified)

  -- 2. one :undo reverts it
  vim.cmd('undo')
  check('one :undo reverts the agent edit', text_of(abuf) == A, text_of(abuf))

  -- 3. the user's unsaved typing survives an agent edit elsewhere in the same buffer
  api.nvim_buf_set_lines(abuf, 0, 1, false, { 'héllo 😀 world, typed by the user' })
  vim.cmd('let &undolevels = &undolevels')  -- the user's typing ends its undo step (as leaving insert mode does)
  res, text = call('edit', { path = 'a.txt', edits = { { oldText = 'second line', newText = '2nd line' } } })
  check('edit next to the user\'s typing succeeded', res ~= nil and res.isError == false, text)
  check('user text and agent edit both in the buffer',
    text_of(abuf) == 'héllo 😀 world, typed by the user\n2nd line\n', text_of(abuf))
  vim.cmd('undo')
  check(':undo removes only the agent edit',
    text_of(abuf) == 'héllo 😀 world, typed by the user\nsecond line\n', text_of(abuf))

  -- 4. a dirty buffer of another file survives an agent edit of a.txt, and read returns it
  vim.cmd('edit ' .. vim.fn.fnameescape(b_path))
  local bbuf = api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(bbuf, client_id)
  api.nvim_buf_set_lines(bbuf, 0, 1, false, { 'keep USER' })
  res, text = call('edit', { path = 'a.txt', edits = { { oldText = 'second line', newText = 'line two' } } })
  check('edit of the other file succeeded', res ~= nil and res.isError == false, text)
  check('a.txt buffer edited', text_of(abuf):find('line two', 1, true) ~= nil, text_of(abuf))
  check('b.txt dirty buffer kept', text_of(bbuf) == 'keep USER\n' and vim.bo[bbuf].modified, text_of(bbuf))
  res, text = call('read', { path = 'b.txt' })
  check('read returns the unsaved buffer with the notice', res ~= nil and res.isError == false
    and text:sub(1, 10) == 'keep USER\n' and text:find('Unsaved changes in the editor', 1, true) ~= nil, text)
  check('b.txt disk untouched', readfile(b_path) == 'keep\n', readfile(b_path))
  R.notes.version = tostring(vim.version().major .. '.' .. vim.version().minor .. '.' .. vim.version().patch)
end, debug.traceback)
if not ok then
  failed = true
  R.lua_error = err
  check('no Lua error', false, err)
end
finish()

-- Issue 17 end to end: the language tools called through pi/executeToolCall (as the MCP relay or a
-- script would), answered by the real daemon asking this Neovim, which asks the user's real pylsp
-- ($PI_TEST_PYLSP, started on FileType python). Definition and references across files, a rename
-- over three files (one undo step per buffer, saved), an edit whose result names the error it
-- introduced, a symbol not on the line, a file without a language server.
local H = dofile(vim.env.PI_TEST_HELPERS)
local api = vim.api

local calls = 0
local MAIN = 'from lib import helper\n\nprint(helper(2))\ns = "éü"; y = helper(4)\n'

--- Run tool `name` with `arguments` through pi/executeToolCall: `text, isError` (nil on no reply).
local function tool(pi, name, arguments)
  calls = calls + 1
  local reply = nil
  require('pi_lsp.client').request(pi, 'pi/executeToolCall', {
    toolCall = { id = 'k' .. calls, name = name, arguments = arguments },
  }, function(err, result)
    reply = { err = err, result = result }
  end)
  H.wait(30000, function() return reply ~= nil end)
  if not reply or reply.err or type(reply.result) ~= 'table' then
    H.note('reply ' .. calls .. ' ' .. name, reply)
    return nil, nil
  end
  local parts = {}
  for _, part in ipairs(reply.result.content or {}) do
    table.insert(parts, part.text or '')
  end
  local text = table.concat(parts, '\n')
  H.note(calls .. ' ' .. name, text)
  return text, reply.result.isError
end

local function has(text, needle)
  return type(text) == 'string' and text:find(needle, 1, true) ~= nil
end

H.run(function()
  require('pi_lsp').setup({
    settings = { maxRetries = 0, edit = { verifyTimeoutSeconds = 10, applyTimeoutSeconds = 20 } },
    attach_timeout_ms = 15000,
    language_server_timeout_ms = 15000,
  })
  local pylsp = H.autostart('pylsp', { vim.env.PI_TEST_PYLSP }, 'python')
  vim.o.hidden = true
  vim.cmd('edit notes.txt')
  vim.cmd('edit main.py')
  local main = api.nvim_get_current_buf()
  local pi = H.client()
  H.check('pi-lsp started', pi ~= nil)
  H.check('pylsp attached and initialized', H.wait(20000, function() return pylsp() and pylsp().initialized end))

  -- definition and references across files
  local text, is_error = tool(pi, 'definition', { path = 'main.py', line = 3, symbol = 'helper' })
  H.check('definition: lib.py line 1', not is_error and has(text, 'lib.py:1:') and has(text, 'def helper(x):'), text)
  text, is_error = tool(pi, 'references', { path = 'main.py', line = 3, symbol = 'helper' })
  H.check('references: the three files', not is_error and has(text, 'lib.py:1:') and has(text, 'main.py:3:')
    and has(text, 'util.py:3:'), text)

  -- a figure, not an assertion: pylsp's own definition time vs the tool through daemon and plugin
  local function median(fn)
    local times = {}
    for i = 1, 5 do
      local t0 = H.uv.hrtime()
      fn()
      times[i] = (H.uv.hrtime() - t0) / 1e6
    end
    table.sort(times)
    return times[3]
  end
  local direct = median(function()
    local done = false
    require('pi_lsp.client').request(pylsp(), 'textDocument/definition', {
      textDocument = { uri = vim.uri_from_bufnr(main) }, position = { line = 2, character = 6 } }, function() done = true end, main)
    H.wait(10000, function() return done end)
  end)
  local through = median(function() tool(pi, 'definition', { path = 'main.py', line = 3, symbol = 'helper' }) end)
  H.note('timing', string.format('definition median of 5: pylsp direct %.1f ms, tool via daemon+plugin %.1f ms', direct, through))

  text, is_error = tool(pi, 'symbols', { path = 'lib.py' })
  H.check('symbols: helper in lib.py', not is_error and has(text, 'helper') and has(text, '1'), text)
  text, is_error = tool(pi, 'hover', { path = 'main.py', line = 3, symbol = 'helper' })
  H.check('hover: the signature', not is_error and has(text, 'helper(x)'), text)

  -- a symbol that is not on the line; a file no language server handles
  text, is_error = tool(pi, 'definition', { path = 'main.py', line = 1, symbol = 'nothere' })
  H.check('a symbol not on the line: an error naming it', is_error and has(text, 'nothere'), text)
  text, is_error = tool(pi, 'definition', { path = 'notes.txt', line = 1, symbol = 'plain' })
  H.check('no language server for notes.txt: an error saying so', is_error and has(text:lower(), 'language server'), text)

  -- an edit that introduces an undefined name gets pylsp's error in its result; the fix does not
  text, is_error = tool(pi, 'edit', { path = 'main.py', edits = { { oldText = 'print(helper(2))', newText = 'print(helper(nope))' } } })
  H.check('edit: the introduced error in the result', not is_error and has(text, "undefined name 'nope'") and has(text, 'main.py:3'), text)
  text, is_error = tool(pi, 'diagnostics', vim.empty_dict())
  H.check('diagnostics of the workspace: the error in main.py', not is_error and has(text, "main.py:3: error: undefined name 'nope'"), text)
  text, is_error = tool(pi, 'edit', { path = 'main.py', edits = { { oldText = 'print(helper(nope))', newText = 'print(helper(2))' } } })
  H.check('edit: the fix lists no new problem', not is_error and not has(text, "undefined name 'nope'"), text)
  text, is_error = tool(pi, 'diagnostics', { path = 'main.py' })
  H.check('diagnostics: main.py has no problem now', not is_error and not has(text, 'nope'), text)
  H.check('main.py buffer as the agent left it', H.text(main) == MAIN, H.text(main))

  -- rename over three files: main.py open, lib.py loaded hidden by the request, util.py closed
  text, is_error = tool(pi, 'rename', { path = 'lib.py', line = 1, symbol = 'helper', newName = 'assist' })
  H.check('rename: 6 places in 3 files, counted per file', not is_error
    and has(text, 'Renamed `helper` to `assist`: 6 places in 3 files.') and has(text, 'main.py: 3')
    and has(text, 'util.py: 2') and has(text, 'lib.py: 1'), text)
  H.check('the transcript shows the rename', H.transcript_row('✓ rename lib.py') ~= nil, require('pi_lsp.transcript').lines())
  local expected = {
    ['main.py'] = 'from lib import assist\n\nprint(assist(2))\ns = "éü"; y = assist(4)\n',
    ['lib.py'] = 'def assist(x):\n    return x + 1\n',
    ['util.py'] = 'from lib import assist\n\nVALUE = assist(3)\n',
  }
  local before = {
    ['main.py'] = MAIN,
    ['lib.py'] = 'def helper(x):\n    return x + 1\n',
    ['util.py'] = 'from lib import helper\n\nVALUE = helper(3)\n',
  }
  for name, want in pairs(expected) do
    local b = H.buf(name)
    H.check('rename: ' .. name .. ' buffer renamed', b and H.text(b) == want, b and H.text(b))
    H.check('rename: ' .. name .. ' saved', H.read(name) == want and b and not vim.bo[b].modified, H.read(name))
  end
  for name, want in pairs(before) do
    local b = H.buf(name)
    if b then
      api.nvim_buf_call(b, function() vim.cmd('silent undo') end)
      H.check('rename: one undo in ' .. name .. ' takes it back', H.text(b) == want, H.text(b))
      api.nvim_buf_call(b, function() vim.cmd('silent redo') end)
      H.check('rename: redo in ' .. name .. ' brings it back', H.text(b) == expected[name], H.text(b))
    end
  end

  -- a language server that does not answer: the tool says which and how long, nothing hangs
  local pid = nil
  for _, child in ipairs(api.nvim_get_proc_children(vim.fn.getpid())) do
    local proc = api.nvim_get_proc(child)
    if proc and proc.name and proc.name:find('pylsp', 1, true) then
      pid = child
    end
  end
  require('pi_lsp.config').get().language_server_timeout_ms = 500
  H.uv.kill(pid, 'sigstop')
  text, is_error = tool(pi, 'definition', { path = 'main.py', line = 3, symbol = 'assist' })
  H.uv.kill(pid, 'sigcont')
  H.check('a frozen server: the tool fails naming it', is_error and has(text, 'pylsp: did not answer within 500 ms'), text)

  local health = H.health('pi_lsp')
  H.check(':checkhealth pi_lsp names pylsp as a server the agent can ask',
    health:find('language servers the agent can ask (definition, references, rename, diagnostics): pylsp', 1, true), health)
  if vim.fn.has('nvim-0.11') == 1 then
    local deprecated = H.health('vim.deprecated')
    H.check(':checkhealth vim.deprecated is clean', deprecated:find('OK: No deprecated functions detected', 1, true)
      and not deprecated:find('WARNING'), deprecated)
  end
end)
